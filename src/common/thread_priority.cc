#include "common/thread_priority.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace basin {

void RunAsBackgroundThread() {
  // On Linux a nice value is a thread's own: PRIO_PROCESS with a thread id sets only it.
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  (void)::setpriority(PRIO_PROCESS, tid, kBackgroundNice);
}

}  // namespace basin
