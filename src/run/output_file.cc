#include "run/output_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace nfpark::run {

OutputFile::OutputFile(std::string final_path) : final_(std::move(final_path)) {
  const std::filesystem::path p(final_);
  const std::string name =
      "." + p.filename().string() + ".nfpark-" + std::to_string(getpid()) + ".tmp";
  temp_ = (p.parent_path() / name).string();
}

bool OutputFile::commit(std::string& err) {
  if (final_.empty() || committed_) return true;
  if (std::rename(temp_.c_str(), final_.c_str()) != 0) {
    err = "cannot move " + temp_ + " to " + final_ + ": " + std::strerror(errno);
    return false;
  }
  committed_ = true;
  return true;
}

void OutputFile::discard() {
  if (final_.empty() || committed_) return;
  std::remove(temp_.c_str());
}

}  // namespace nfpark::run
