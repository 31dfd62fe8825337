#include "symbols/build_id.h"

#include <elf.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace fg {

std::string raw_build_id_of(Elf* elf) {
  const void* bits = nullptr;
  ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);
  if (n <= 0 || !bits) return {};
  return std::string(static_cast<const char*>(bits), static_cast<size_t>(n));
}

int open_if_build_id(const std::string& path, const std::string& want) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  bool ok = elf && elf_kind(elf) == ELF_K_ELF && !want.empty() && raw_build_id_of(elf) == want;
  if (elf) elf_end(elf);
  if (!ok) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string live_vdso_image() {
  auto base = reinterpret_cast<const unsigned char*>(getauxval(AT_SYSINFO_EHDR));
  if (!base || std::memcmp(base, ELFMAG, SELFMAG) != 0 || base[EI_CLASS] != ELFCLASS64) return {};
  Elf64_Ehdr eh;
  std::memcpy(&eh, base, sizeof eh);
  uint64_t size = eh.e_shoff + uint64_t(eh.e_shnum) * eh.e_shentsize;
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, base + eh.e_phoff + uint64_t(i) * eh.e_phentsize, sizeof ph);
    if (ph.p_type == PT_LOAD) size = std::max<uint64_t>(size, ph.p_offset + ph.p_filesz);
  }
  if (size == 0 || size > (1u << 20)) return {};
  return std::string(reinterpret_cast<const char*>(base), size);
}

std::string build_id_of_image(std::string_view image) {
  static const bool libelf_ready = elf_version(EV_CURRENT) != EV_NONE;
  if (!libelf_ready || image.empty()) return {};
  std::string copy(image);  // elf_memory wants a mutable buffer
  Elf* elf = elf_memory(copy.data(), copy.size());
  if (!elf) return {};
  std::string id = elf_kind(elf) == ELF_K_ELF ? raw_build_id_of(elf) : std::string();
  elf_end(elf);
  return id;
}

std::string build_id_hex(std::string_view raw) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(raw.size() * 2);
  for (unsigned char c : raw) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string build_id_from_hex(std::string_view hex) {
  if (hex.size() % 2) return {};
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    auto nib = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    int hi = nib(hex[i]), lo = nib(hex[i + 1]);
    if (hi < 0 || lo < 0) return {};
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

}  // namespace fg
