#include "common/task_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace basin {
namespace {

TEST(TaskThreadTest, RunsTasksInOrderOnOneThreadAndGivesTheirStatus) {
  TaskThread worker;
  std::vector<int> ran;  // only the worker's thread writes it
  std::vector<std::thread::id> threads;
  std::vector<std::shared_future<Status>> done;
  for (int i = 0; i < 20; i++) {
    done.push_back(worker.Submit([&, i] {
      ran.push_back(i);
      threads.push_back(std::this_thread::get_id());
      return i == 7 ? Status::IOError("task 7 failed") : Status::OK();
    }));
  }
  for (int i = 0; i < 20; i++) {
    Status status = done[i].get();
    EXPECT_EQ(status.ok(), i != 7) << i;
  }
  EXPECT_EQ(done[7].get().code(), ErrorCode::kIOError);
  ASSERT_EQ(ran.size(), 20u);
  for (int i = 0; i < 20; i++) EXPECT_EQ(ran[i], i);
  for (const std::thread::id& id : threads) {
    EXPECT_EQ(id, threads[0]);  // one kept thread, not one per task
    EXPECT_NE(id, std::this_thread::get_id());
  }
}

TEST(TaskThreadTest, SubmitWaitsForRoomInTheQueue) {
  TaskThread worker(/*capacity=*/1);
  std::atomic<bool> release{false};
  std::atomic<int> submitted{0};
  auto blocked = worker.Submit([&] {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return Status::OK();
  });
  std::thread producer([&] {
    for (int i = 0; i < 3; i++) {
      worker.Submit([] { return Status::OK(); });
      submitted++;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // The first task runs, one waits in the queue; the producer waits for room for the next.
  EXPECT_LE(submitted.load(), 1);
  release = true;
  producer.join();
  EXPECT_EQ(submitted.load(), 3);
  EXPECT_TRUE(blocked.get().ok());
}

TEST(TaskThreadTest, DestructorRunsTheTasksAlreadyGiven) {
  std::atomic<int> ran{0};
  {
    TaskThread worker;
    for (int i = 0; i < 4; i++) {
      worker.Submit([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        ran++;
        return Status::OK();
      });
    }
  }
  EXPECT_EQ(ran.load(), 4);
}

}  // namespace
}  // namespace basin
