#include "symbols/elf_preloader.h"

#include <utility>

namespace fg {

ElfPreloader::ElfPreloader(std::function<std::vector<Job>()> list_jobs)
    : thread_([this, list = std::move(list_jobs)] { run(list); }) {}

ElfPreloader::~ElfPreloader() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::string ElfPreloader::key_of(const Job& job) {
  std::string k = job.file;
  for (const std::string* part : {&job.build_id, &job.search.debuginfo_path, &job.search.cached_debug_file})
    k.append(1, '\0').append(*part);
  k.append(1, job.search.demangle ? 'd' : 'm');
  return k;
}

void ElfPreloader::run(const std::function<std::vector<Job>()>& list_jobs) {
  std::vector<Job> listed;
  try {
    listed = list_jobs();
  } catch (...) {
    listed.clear();  // only a head start: the caller opens everything itself
  }
  std::unique_lock<std::mutex> lock(mutex_);
  jobs_ = std::move(listed);
  states_.assign(jobs_.size(), State::waiting);
  loaded_.resize(jobs_.size());
  for (size_t i = 0; i < jobs_.size(); ++i) index_.emplace(key_of(jobs_[i]), i);
  listed_ = true;
  cv_.notify_all();
  for (size_t i = 0; i < jobs_.size() && !stopping_; ++i) {
    if (states_[i] != State::waiting) continue;
    states_[i] = State::opening;
    const Job job = jobs_[i];
    lock.unlock();
    Loaded l;
    bool opened = true;
    try {
      l.elf = ElfObject::open(job.file, job.build_id, job.search, &l.problem);
    } catch (...) {
      opened = false;  // nothing to hand over: the caller opens it and sees the error itself
    }
    lock.lock();
    states_[i] = opened ? State::opened : State::claimed;
    if (opened) loaded_[i] = std::move(l);
    cv_.notify_all();
  }
}

std::optional<ElfPreloader::Loaded> ElfPreloader::take(const Job& job) {
  const std::string k = key_of(job);
  std::unique_lock<std::mutex> lock(mutex_);
  // Listing stats a few hundred paths: far less than opening one object.
  cv_.wait(lock, [&] { return listed_; });
  auto it = index_.find(k);
  if (it == index_.end()) return std::nullopt;
  const size_t i = it->second;
  cv_.wait(lock, [&] { return states_[i] != State::opening; });
  if (states_[i] != State::opened) {
    states_[i] = State::claimed;
    return std::nullopt;
  }
  states_[i] = State::claimed;
  ++taken_;
  return std::move(loaded_[i]);
}

size_t ElfPreloader::taken() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return taken_;
}

}  // namespace fg
