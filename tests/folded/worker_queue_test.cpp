// WorkerQueue (lib/folded/worker_queue.h): jobs run in submission order on one
// other thread, the backlog is bounded, drain() waits and reports errors,
// stop() finishes what was submitted.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "folded/worker_queue.h"

namespace fg {
namespace {

TEST(WorkerQueue, RunsJobsInSubmissionOrderOnItsOwnThread) {
  std::vector<int> seen;  // worker thread only until drain()
  std::thread::id worker_id;
  WorkerQueue<int> q(
      [&](const std::vector<int>& jobs) {
        worker_id = std::this_thread::get_id();
        seen.insert(seen.end(), jobs.begin(), jobs.end());
      },
      1000);
  std::vector<int> batch;
  for (int i = 0; i < 10000; ++i) {
    batch.push_back(i);
    if (batch.size() == 7) {
      q.submit(batch);
      EXPECT_TRUE(batch.empty());
    }
  }
  q.submit(batch);
  q.drain();
  ASSERT_EQ(seen.size(), 10000u);
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(seen[size_t(i)], i);
  EXPECT_NE(worker_id, std::this_thread::get_id());
  EXPECT_EQ(q.backlog(), 0u);
}

TEST(WorkerQueue, SubmitWaitsWhileTheBacklogIsFull) {
  std::atomic<bool> release{false};
  std::atomic<int> done{0};
  WorkerQueue<int> q(
      [&](const std::vector<int>& jobs) {
        while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        done += int(jobs.size());
      },
      4);
  std::vector<int> four{1, 2, 3, 4};
  q.submit(four);  // the backlog is now full (the worker holds them)
  std::atomic<bool> second_returned{false};
  std::thread producer([&] {
    std::vector<int> more{5};
    q.submit(more);
    second_returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(second_returned) << "submit did not wait for a full backlog";
  EXPECT_EQ(q.backlog(), 4u);
  release = true;
  producer.join();
  EXPECT_TRUE(second_returned);
  q.drain();
  EXPECT_EQ(done, 5);
}

// wait_done(n) returns once the first n jobs are done, while later ones
// still run (a raw-stack table's stacks, while the next table's are named).
// Jobs are counted done a batch at a time (the jobs the worker took at once).
TEST(WorkerQueue, WaitDoneWaitsForTheFirstJobsOnly) {
  std::atomic<bool> release{false};
  std::atomic<int> done{0};
  WorkerQueue<int> q(
      [&](const std::vector<int>& jobs) {
        for (int j : jobs) {
          while (j >= 2 && !release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
          ++done;
        }
      },
      100);
  std::vector<int> first{0, 1};
  q.submit(first);
  while (done < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::vector<int> later{2, 3};
  q.submit(later);  // held by the worker until released
  q.wait_done(2);   // does not wait for them
  EXPECT_EQ(done, 2);
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    q.wait_done(3);
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(returned) << "wait_done(3) returned before the third job was done";
  release = true;
  waiter.join();
  EXPECT_EQ(done, 4);
  q.wait_done(4);  // done already: returns at once
  q.drain();
}

// An error in the work is rethrown by wait_done as by drain.
TEST(WorkerQueue, WaitDoneRethrowsTheWorksError) {
  WorkerQueue<int> q(
      [](const std::vector<int>& jobs) {
        for (int j : jobs)
          if (j == 1) throw std::runtime_error("bad job");
      },
      100);
  for (int i = 0; i < 3; ++i) q.submit_one(i);
  EXPECT_THROW(q.wait_done(3), std::runtime_error);
  q.drain();  // reported once
}

TEST(WorkerQueue, StopFinishesWhatWasSubmittedAndIsIdempotent) {
  std::atomic<int> done{0};
  {
    WorkerQueue<int> q(
        [&](const std::vector<int>& jobs) {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          done += int(jobs.size());
        },
        100);
    for (int i = 0; i < 20; ++i) q.submit_one(i);
    q.stop();
    EXPECT_EQ(done, 20);
    q.stop();
  }  // the destructor stops again: fine
  EXPECT_EQ(done, 20);
}

TEST(WorkerQueue, AnErrorIsRethrownByDrainOnceAndLaterJobsAreSkipped) {
  std::vector<int> ran;
  WorkerQueue<int> q(
      [&](const std::vector<int>& jobs) {
        for (int j : jobs) {
          if (j == 3) throw std::runtime_error("job 3 failed");
          ran.push_back(j);
        }
      },
      1);  // backlog 1: each job is its own batch
  for (int i = 0; i < 6; ++i) q.submit_one(i);
  EXPECT_THROW(
      {
        try {
          q.drain();
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "job 3 failed");
          throw;
        }
      },
      std::runtime_error);
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2}));
  EXPECT_NO_THROW(q.drain());
  EXPECT_EQ(q.backlog(), 0u);
}

TEST(WorkerQueue, EmptySubmitsAndDrainsWithoutWorkReturnAtOnce) {
  int batches = 0;
  WorkerQueue<int> q([&](const std::vector<int>&) { ++batches; }, 8);
  std::vector<int> none;
  q.submit(none);
  q.drain();
  q.drain();
  EXPECT_EQ(batches, 0);
}

}  // namespace
}  // namespace fg
