// The first bytes of an input that is a pipe, without losing them: format
// detection peeks at every input's head, and on a pipe a peek is a read.
// Process substitution (`fgtool svg <(fgtool fold perf.data)`) names a pipe
// as /dev/fd/N; its head is read once, and a pipe that yields the head and
// then the rest takes descriptor N's place, so that the same path reads the
// whole stream. Any thread may call it; a helper thread copies the stream.
#pragma once

#include <optional>
#include <string>

namespace fg {

// For a path that names one of this process's descriptors (/dev/fd/N,
// /proc/self/fd/N, /dev/stdin) open on a pipe, character device or socket:
// its first `max` bytes (fewer at the end of the stream), the same on every
// call for that path. std::nullopt for any other path (regular files and
// directories are peeked at by reading them; a named FIFO cannot be taken
// over, as a second open would find its data gone, so it is not read here).
std::optional<std::string> stream_head(const std::string& path, size_t max = 4096);

// Whether `path` is a named pipe, character device or socket that
// stream_head cannot take over (its head stays unread).
bool is_unpeekable_stream(const std::string& path);

// Whether `path` names a pipe, character device or socket of any kind: such
// an input can be read once only (no second pass, no header read ahead).
bool is_stream_path(const std::string& path);

}  // namespace fg
