// Stopping long jobs cleanly on Ctrl-C or SIGTERM (a cluster's time limit): while an
// InterruptHandler lives, those signals only set a flag that the job polls between steps, so it can
// save its state (a training snapshot, analysed rows) and exit with ErrorKind::interrupted. A
// second Ctrl-C while the first is being handled kills the process as usual; a repeated SIGTERM
// (a cluster and a parent process both passing on a job's end) does not. Not a general signal
// framework: one handler at a time, process-wide.
#pragma once

namespace labpose {

class InterruptHandler {
 public:
  InterruptHandler();   // installs SIGINT and SIGTERM handlers, clears the flag
  ~InterruptHandler();  // restores the previous handlers and clears the flag
  InterruptHandler(const InterruptHandler&) = delete;
  InterruptHandler& operator=(const InterruptHandler&) = delete;
};

/// True once SIGINT or SIGTERM arrived while an InterruptHandler was installed.
bool interrupt_requested();
/// Sets the flag as a signal would (tests, and jobs that stop themselves).
void request_interrupt();
/// The name of the signal that set the flag ("SIGINT", "SIGTERM", or "request").
const char* interrupt_reason();

}  // namespace labpose
