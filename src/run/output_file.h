// OutputFile: how a run writes its output so that a failed run never damages an existing file.
// The writer writes to a temporary file beside the output (same directory, so the final rename
// is atomic); commit() renames it over the output when the run has a result, and the destructor
// removes it otherwise (bad input, an error, a broken invariant). Whether the output is also an
// input is checked before anything opens (run::Loader::finish).
#pragma once
#include <string>

namespace nfpark::run {

class OutputFile {
 public:
  OutputFile() = default;
  explicit OutputFile(std::string final_path);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile() { discard(); }

  bool empty() const { return final_.empty(); }
  const std::string& path() const { return final_; }
  // Where to write: "DIR/.NAME.nfpark-PID.tmp".
  const std::string& temp_path() const { return temp_; }
  // Moves the temporary file over the output. False with `err` when it cannot.
  bool commit(std::string& err);
  // Removes the temporary file (nothing when committed or never written).
  void discard();

 private:
  std::string final_, temp_;
  bool committed_ = false;
};

}  // namespace nfpark::run
