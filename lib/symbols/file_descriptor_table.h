// The process's file-descriptor table, grown once while it has one thread.
// A fold keeps every ELF object it opens open (hundreds on a busy system-wide
// recording). Each time the kernel grows a shared table (64 -> 128 -> 256 ->
// 512 descriptors) it waits for an RCU grace period in open(): 10-17 ms on
// these VMs, on the symbolising thread, with the folding thread waiting for
// it. Grown before any thread starts, it needs no wait then or later.
#pragma once

namespace fg {

// Grows the table to hold descriptors below `count` (capped by
// RLIMIT_NOFILE); quietly does nothing when it cannot. Call from main()
// before any thread starts: a later call still works, but waits as above.
void reserve_file_descriptor_table(int count);

}  // namespace fg
