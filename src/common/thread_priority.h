// Background work (a table's checkpoints, a stream's compaction of its sink) runs on threads
// of lower CPU priority than the statements and micro-batches it runs beside: on a machine
// with few cores, a checkpoint written at full priority took the cores a batch's threads
// (its plan, its read, its commit) wait on in turn, and made every tenth batch twice as slow.
//
// Thread safety: acts on the calling thread only.
#pragma once

namespace basin {

// How far below a foreground thread's priority background work runs (a nice value): low
// enough that a busy foreground takes the cores first, not so low that background work
// starves on a busy machine.
inline constexpr int kBackgroundNice = 10;

// Lowers the calling thread's CPU priority to kBackgroundNice. Best effort: where the
// system refuses, the thread keeps its priority.
void RunAsBackgroundThread();

}  // namespace basin
