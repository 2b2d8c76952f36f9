// How a Basin program sets up glibc's malloc (the basin command, and any program embedding
// Basin that wants the same): freed memory is kept for the next allocation
// instead of being handed back to the system at once. A stream's batch allocates and frees
// large buffers over and over (a Kafka fetch's response, megabytes; its records' copies;
// Parquet pages), and with glibc's defaults each was mapped afresh or its heap trimmed after
// use, so every batch took page faults on memory it had just freed: a tenth of a Kafka
// stream's CPU time (stream_ingest_bench, 11,000 faults a run against 1,500 to 4,500).
//
// Thread safety: call at the start of main, before other threads start.
#pragma once

namespace basin {

// Allocations up to kMmapThresholdBytes come from malloc's heaps (not a mapping of their
// own), and a heap keeps up to kTrimThresholdBytes free at its top. Resident memory then
// stays near the process's peak rather than falling after each batch; it stays bounded by
// that peak. A GLIBC_TUNABLES that sets any glibc.malloc tunable wins: nothing is changed.
// Does nothing where the C library is not glibc.
void TuneMalloc();

inline constexpr int kMmapThresholdBytes = 32 << 20;  // glibc's largest allowed value
inline constexpr int kTrimThresholdBytes = 64 << 20;

}  // namespace basin
