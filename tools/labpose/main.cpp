// labpose: the command-line entry point; the parsing, the commands and the exit codes are in
// cli.cpp, which the Python bindings share.
#include "tools/labpose/cli.hpp"

int main(int argc, char** argv) {
  return labpose::tools::run_main(argc, argv);
}
