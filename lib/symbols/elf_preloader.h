// Opens a recording's ELF objects ahead, on a thread of its own, so that the
// symbolising thread finds each one loaded (symbol table built) when it first
// needs it. Loading is a sixth of a busy system-wide fold's symbolising
// (busy3.data: 327 objects, 0.14 s), most of it in the fold's first fifth,
// while the folding thread waits for the symbolising one.
// Owning threads: the SymbolCache's caller calls take() (under its own lock
// where two threads share the cache); the preloader's thread only lists
// files and opens objects. Each object is loaded by one thread and handed
// over whole under the preloader's mutex.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "symbols/elf_object.h"

namespace fg {

class ElfPreloader {
 public:
  // What ElfObject::open is called with.
  struct Job {
    std::string file, build_id;
    DebugSearch search;
  };
  struct Loaded {
    std::unique_ptr<ElfObject> elf;  // nullptr: the open failed, see problem
    std::string problem;
  };

  // Starts the thread: it runs list_jobs (finding the files stats paths,
  // slow on a cold cache), then opens each job in order.
  explicit ElfPreloader(std::function<std::vector<Job>()> list_jobs);
  // Stops after the object being opened and joins.
  ~ElfPreloader();
  ElfPreloader(const ElfPreloader&) = delete;
  ElfPreloader& operator=(const ElfPreloader&) = delete;

  // The object for this job if the thread opened it, waiting while the
  // jobs are listed or it is being opened; nullopt if it is not a job or
  // not yet started, and then the thread never opens it (the caller does).
  // Once per job.
  std::optional<Loaded> take(const Job& job);

  // Objects opened on the thread and taken, for stats and tests.
  size_t taken() const;

 private:
  enum class State { waiting, opening, opened, claimed };
  static std::string key_of(const Job& job);
  void run(const std::function<std::vector<Job>()>& list_jobs);

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  // Under mutex_: the jobs (once listed), their states and results.
  std::vector<Job> jobs_;
  std::vector<State> states_;
  std::vector<Loaded> loaded_;
  std::unordered_map<std::string, size_t> index_;
  bool listed_ = false;
  bool stopping_ = false;
  size_t taken_ = 0;
  std::thread thread_;  // last: started after the members above exist
};

}  // namespace fg
