// StackKeyBuilder and StackKeyView (lib/fold/stack_key.h): the words a
// sample's stack becomes, read back as the symboliser reads them.
#include <gtest/gtest.h>

#include <random>

#include "fold/stack_key.h"
#include "folded/folded_profile.h"

namespace fg {
namespace {

using namespace callchain_context;

struct KeyFixture : ::testing::Test {
  KeyFixture() : builder(table) {
    table.add_mmap(100, 0x400000, 0x10000, 0, "/usr/bin/prog", true);
    proc = table.process(100);
    dwarf_attr.sample_type = sample_bits::STACK_USER | sample_bits::REGS_USER | sample_bits::CALLCHAIN;
    dwarf_attr.sample_regs_user = 0xff;
  }
  std::vector<uint64_t> key_of(const Sample& s, const UnwoundUserStack& unwound = {}) {
    KeyWords key;
    builder.append_key(s, &root, proc, unwound, key);
    return std::vector<uint64_t>(key.begin(), key.end());
  }
  ProcessTable table;
  StackKeyBuilder builder;
  const ProcessMaps* proc = nullptr;
  EventAttr fp_attr, dwarf_attr;
  int root = 0;  // any address: the key keeps it opaque
};

TEST_F(KeyFixture, FramePointerCallchainKeepsKindsAndReturnAddresses) {
  const uint64_t chain[] = {KERNEL, 0xffffffff81000010, 0xffffffff81000020, USER, 0x401000, 0x402000, 0x403000};
  Sample s;
  s.attr = &fp_attr;
  s.misc = 1;  // kernel mode
  s.callchain = chain;
  s.callchain_nr = 7;
  std::vector<uint64_t> key = key_of(s);
  StackKeyView v(key.data());
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v.word_count(), key.size());
  EXPECT_EQ(v.root(), &root);
  EXPECT_TRUE(v.has_user_frames());
  EXPECT_EQ(key[2], proc->generation);
  EXPECT_EQ(key[3], table.kernel().generation);
  const StackAddress want[] = {{0xffffffff81000010, true, false},
                               {0xffffffff81000020, true, true},
                               {0x401000, false, false},  // the first of a context is the sampled pc
                               {0x402000, false, true},
                               {0x403000, false, true}};
  for (size_t i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(v[i].address, want[i].address);
    EXPECT_EQ(v[i].kernel, want[i].kernel);
    EXPECT_EQ(v[i].return_address, want[i].return_address);
  }
}

TEST_F(KeyFixture, KernelOnlyStacksDoNotDependOnTheProcess) {
  const uint64_t chain[] = {KERNEL, 0xffffffff81000010};
  Sample s;
  s.attr = &fp_attr;
  s.misc = 1;
  s.callchain = chain;
  s.callchain_nr = 2;
  std::vector<uint64_t> key = key_of(s);
  EXPECT_FALSE(StackKeyView(key.data()).has_user_frames());
  EXPECT_EQ(key[2], 0u);
}

TEST_F(KeyFixture, DeferredCookiesAndGuestContextsAreNotAddresses) {
  const uint64_t chain[] = {USER_DEFERRED, 0x1234 /*cookie*/, 0x401000, GUEST, 0x999, USER, 0x402000};
  Sample s;
  s.attr = &fp_attr;
  s.misc = 2;
  s.callchain = chain;
  s.callchain_nr = 7;
  std::vector<uint64_t> key = key_of(s);
  StackKeyView v(key.data());
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].address, 0x401000u);
  EXPECT_EQ(v[1].address, 0x402000u);
  EXPECT_FALSE(v[1].return_address);  // first after a context marker
}

TEST_F(KeyFixture, NoCallchainGivesTheSampledIp) {
  Sample s;
  s.attr = &fp_attr;
  s.misc = 2;
  s.ip = 0x401234;
  std::vector<uint64_t> key = key_of(s);
  StackKeyView v(key.data());
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].address, 0x401234u);
  EXPECT_FALSE(v[0].kernel);
}

TEST_F(KeyFixture, DwarfSamplesTakeTheUnwoundFramesAndMarkCutShortStacks) {
  const uint64_t chain[] = {KERNEL, 0xffffffff81000010, USER, 0x401000, 0x402000};
  uint64_t regs[8] = {};
  uint8_t stack[64] = {};
  Sample s;
  s.attr = &dwarf_attr;
  s.misc = 1;
  s.callchain = chain;
  s.callchain_nr = 5;
  s.regs_user = regs;
  s.regs_user_mask = 0xff;
  s.stack_user = stack;
  s.stack_user_size = s.stack_user_dyn_size = sizeof stack;
  ASSERT_TRUE(StackKeyBuilder::is_dwarf(s));
  std::vector<UnwindFrame> frames = {{0x401100, false}, {0x401200, true}};
  std::vector<uint64_t> whole = key_of(s, UnwoundUserStack{&frames, UnwindOutcome::complete});
  StackKeyView v(whole.data());
  ASSERT_EQ(v.size(), 3u);  // the callchain's user part is replaced
  EXPECT_TRUE(v[0].kernel);
  EXPECT_EQ(v[1].address, 0x401100u);
  EXPECT_EQ(v[2].address, 0x401200u);
  EXPECT_TRUE(v[2].return_address);
  EXPECT_EQ(builder.stats().cut_short_samples, 0u);

  std::vector<uint64_t> cut = key_of(s, UnwoundUserStack{&frames, UnwindOutcome::memory_outside_copy});
  StackKeyView c(cut.data());
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[3].address, kCutShortMarker);
  EXPECT_NE(whole, cut);
  EXPECT_EQ(builder.stats().cut_short_samples, 1u);
  EXPECT_TRUE(builder.stats().dwarf);

  // Nothing unwound and no kernel part: the sampled ip stands alone.
  s.callchain_nr = 0;
  s.misc = 2;
  s.ip = 0x401abc;
  std::vector<UnwindFrame> none;
  std::vector<uint64_t> ip_only = key_of(s, UnwoundUserStack{&none, UnwindOutcome::complete});
  ASSERT_EQ(StackKeyView(ip_only.data()).size(), 1u);
  EXPECT_EQ(StackKeyView(ip_only.data())[0].address, 0x401abcu);
}

TEST_F(KeyFixture, OverlongCallchainsKeepTheLeafMostFrames) {
  std::vector<uint64_t> chain{USER};
  for (uint64_t i = 0; i < kMaxStackDepth + 100; ++i) chain.push_back(0x400000 + i);
  Sample s;
  s.attr = &fp_attr;
  s.misc = 2;
  s.callchain = chain.data();
  s.callchain_nr = chain.size();
  std::vector<uint64_t> key = key_of(s);
  StackKeyView v(key.data());
  ASSERT_EQ(v.size(), kMaxStackDepth);
  EXPECT_EQ(v[0].address, 0x400000u);
  EXPECT_EQ(v[kMaxStackDepth - 1].address, 0x400000u + kMaxStackDepth - 1);
  EXPECT_EQ(builder.stats().truncated_stacks, 1u);
  // Flag words of 32 addresses each decode at every position.
  EXPECT_FALSE(v[0].return_address);
  EXPECT_TRUE(v[33].return_address);
  EXPECT_FALSE(v[33].kernel);
}

// The callchain key is built a run of addresses at a time (runs copied
// whole, kinds set a flag word at a time). This checks it against the
// rules read one entry at a time, on random callchains: markers anywhere,
// deferred cookies, guest and hypervisor contexts, runs that cross the
// 32-address flag words, and chains longer than a key keeps.
TEST_F(KeyFixture, CallchainKeysAgreeWithTheRulesReadEntryByEntry) {
  std::mt19937_64 rng(7);
  const uint64_t markers[] = {KERNEL, USER, USER_DEFERRED, GUEST, HV, GUEST_KERNEL, GUEST_USER};
  for (int round = 0; round < 400; ++round) {
    SCOPED_TRACE(round);
    std::vector<uint64_t> chain;
    const size_t len = round % 50 == 0 ? kMaxStackDepth + 200 : 1 + rng() % 200;  // none: the sampled ip
    while (chain.size() < len) {
      if (rng() % 8 == 0) {
        chain.push_back(markers[rng() % 7]);
        if (chain.back() == USER_DEFERRED) chain.push_back(rng() % 1000);  // the cookie
      } else {
        chain.push_back(0x400000 + rng() % 0x10000);
      }
    }
    Sample s;
    s.attr = &fp_attr;
    s.misc = rng() % 2 ? 1 : 2;
    s.callchain = chain.data();
    s.callchain_nr = chain.size();
    // The rules, entry by entry.
    std::vector<StackAddress> want;
    bool truncated = false;
    int context = s.misc == 1 ? 1 : 2;
    bool first = true;
    for (size_t i = 0; i < chain.size(); ++i) {
      const uint64_t v = chain[i];
      if (v >= MAX) {
        context = v == KERNEL ? 1 : v == USER || v == USER_DEFERRED ? 2 : 0;
        if (v == USER_DEFERRED) ++i;
        first = true;
        continue;
      }
      if (context == 0) continue;
      if (want.size() == std::min<size_t>(chain.size(), kMaxStackDepth)) {
        truncated = true;
        continue;
      }
      want.push_back(StackAddress{v, context == 1, !first});
      first = false;
    }
    const uint64_t truncated_before = builder.stats().truncated_stacks;
    std::vector<uint64_t> key = key_of(s);
    StackKeyView v(key.data());
    EXPECT_EQ(v.word_count(), key.size());
    EXPECT_EQ(builder.stats().truncated_stacks - truncated_before, truncated ? 1u : 0u);
    ASSERT_EQ(v.size(), want.size());
    bool user = false;
    for (size_t i = 0; i < want.size(); ++i) {
      SCOPED_TRACE(i);
      ASSERT_EQ(v[i].address, want[i].address);
      ASSERT_EQ(v[i].kernel, want[i].kernel);
      ASSERT_EQ(v[i].return_address, want[i].return_address);
      user |= !want[i].kernel;
    }
    EXPECT_EQ(key[2], user ? proc->generation : 0u);
  }
}

TEST_F(KeyFixture, KeysAppendAndChangeWithTheMaps) {
  const uint64_t chain[] = {USER, 0x401000, 0x402000};
  Sample s;
  s.attr = &fp_attr;
  s.misc = 2;
  s.callchain = chain;
  s.callchain_nr = 3;
  std::vector<uint64_t> before = key_of(s);
  EXPECT_EQ(key_of(s), before);  // deterministic
  KeyWords two;
  builder.append_key(s, &root, proc, {}, two);
  builder.append_key(s, &root, proc, {}, two);
  ASSERT_EQ(two.size(), 2 * before.size());
  EXPECT_TRUE(std::equal(before.begin(), before.end(), two.begin()));
  EXPECT_TRUE(std::equal(before.begin(), before.end(), two.begin() + long(before.size())));
  table.add_mmap(100, 0x500000, 0x1000, 0, "/usr/lib/libx.so", true);  // a new map generation
  EXPECT_NE(key_of(s), before);
}

}  // namespace
}  // namespace fg
