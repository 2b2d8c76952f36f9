// StreamCheckpoint: a stream's checkpoint folder (docs/stream-checkpoints.md), read and
// written through an ObjectStore rooted at the folder.
//
// The folder records, for each micro-batch, what it reads (`offsets/<N>.json`, created
// before anything the batch writes commits, with the figures of batch N-1's commit) and, for
// the last batch a run committed before it stopped or found nothing new, that it is done
// (`commits/<N>.json`). Every object is created with put-if-absent and never rewritten, so two runs of one
// stream cannot both plan batch N: the loser gets Conflict. Recover() tells a run where to resume from what
// the folder holds and the sink table's `txn` version for the stream; the batch's Delta commit, which carries
// that `txn`, is what makes a batch count, not these files.
//
// Thread safety: one run uses a StreamCheckpoint from one thread; distinct runs (processes)
// on the same folder are kept apart by put-if-absent.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "basin/object_store.h"
#include "basin/status.h"

namespace basin::stream {

inline constexpr int kCheckpointFormat = 1;

// How many of the newest batches keep their objects (docs/stream-checkpoints.md, Retention).
inline constexpr int64_t kRetainedBatches = 100;

struct StreamMetadata {
  std::string stream_id;  // a UUID: the appId of the sink commits' txn
  int64_t created_time_ms = 0;
  std::string statement;  // the statement the stream runs
  std::string sink_table;
  std::string sink_location;
};

// What commits/<N>.json (or offsets/<N+1>.json's kPreviousCommitField) says of a finished
// batch.
struct BatchCommit {
  int64_t batch_id = 0;
  int64_t table_version = -1;  // -1: no commit, or found by its txn after a crash
  std::optional<int64_t> dead_letter_version;
  int64_t rows_in = 0;
  int64_t rows_out = 0;
  int64_t dead_letters = 0;
  int64_t late_rows = 0;
  int64_t duration_ms = 0;
  int64_t committed_time_ms = 0;
  // Not recorded in the folder: what the run did after the batch (an automatic compaction
  // of the sink, or why it failed), for the run's progress report.
  std::string notice;
  // Not recorded either: the newest source data the batch read, as a time (BatchRead).
  std::optional<int64_t> source_time_ms;
};

// From the newest source data `commit` read to its commit, never negative (a producer's
// clock ahead of ours counts as 0); nullopt when its sources could not tell.
std::optional<int64_t> EndToEndMs(const BatchCommit& commit);

// The field of offsets/<N>.json that holds batch N-1's commit, as commits/<N-1>.json would:
// a run that commits batch after batch writes no marker for them.
inline constexpr const char* kPreviousCommitField = "previousCommit";

// `commit` as commits/<N>.json holds it.
nlohmann::json CommitJson(const BatchCommit& commit);

// Where a run resumes.
struct Recovery {
  enum class Action {
    kPlan,          // plan batch `batch_id` after `previous` (the first batch when previous is unset)
    kRerun,         // run batch `batch_id` again over exactly `planned`
    kRecordCommit,  // batch `batch_id` committed (the sink's txn says so): write its commit
                    // marker, then plan the next
  };
  Action action = Action::kPlan;
  int64_t batch_id = 0;
  std::optional<nlohmann::json> planned;   // kRerun, kRecordCommit: offsets/<batch_id>.json
  std::optional<nlohmann::json> previous;  // kPlan: offsets of the batch before, when there is one
};

class StreamCheckpoint {
 public:
  // Opens the checkpoint in `store` (rooted at the folder). A folder without metadata.json
  // becomes `proposed`'s stream; otherwise its metadata is read, and the statement must be
  // `proposed.statement` up to whitespace (InvalidArgument naming both otherwise: a changed
  // statement is a new stream, with a new checkpoint). Corruption naming the object for a
  // malformed metadata.json, Unsupported for a newer format.
  static Result<std::unique_ptr<StreamCheckpoint>> Open(std::shared_ptr<ObjectStore> store,
                                                        const StreamMetadata& proposed);

  // The stream already in `store`, to read it (basin stream status). NotFound when the
  // folder holds no stream; Corruption and Unsupported as for Open.
  static Result<std::unique_ptr<StreamCheckpoint>> OpenExisting(std::shared_ptr<ObjectStore> store);

  const StreamMetadata& metadata() const { return metadata_; }

  // Where to resume, given the sink table's txn version for this stream (nullopt when the
  // table has none): from the newest planned batch, done when its marker is there or the
  // table's txn reached it. Corruption when the folder contradicts itself or the table (a
  // commit marker without its offsets, the table ahead of every planned batch).
  Result<Recovery> Recover(std::optional<int64_t> sink_txn_version);

  // Records what batch `batch_id` reads, before it commits. Conflict when another run planned
  // that batch already.
  Status WriteOffsets(int64_t batch_id, const nlohmann::json& offsets);
  Result<nlohmann::json> ReadOffsets(int64_t batch_id);
  // Records that batch `commit.batch_id` is done; a marker already there is left as it is.
  Status WriteCommit(const BatchCommit& commit);
  Result<std::optional<BatchCommit>> ReadCommit(int64_t batch_id);
  // The newest batch the folder says committed, with its figures: the newest planned batch's
  // marker, else the commit its offsets record of the batch before, else the newest marker
  // (a folder an earlier Basin wrote). nullopt when no batch committed. The sink table may
  // hold a newer batch whose marker was not written yet (Recover finds it).
  Result<std::optional<BatchCommit>> NewestCommit();

  // Deletes the offsets and commit objects of batches before `first_kept`: every one the
  // folder lists with `sweep` (a run's start, after crashes or an older Basin left some),
  // else only those of batch first_kept - 1, the one a new commit pushed out. The folder
  // then stays bounded however long the stream runs, and so does Recover's listing.
  // REQUIRES: first_kept <= the newest planned batch (Recover reads its offsets).
  Status Expire(int64_t first_kept, bool sweep);

  // The newest planned and the newest committed batch; nullopt when there is none.
  Result<std::optional<int64_t>> LatestPlanned();
  Result<std::optional<int64_t>> LatestCommitted();

  // Keys of the objects (for messages and tests).
  static std::string OffsetsKey(int64_t batch_id);
  static std::string CommitKey(int64_t batch_id);

 private:
  StreamCheckpoint(std::shared_ptr<ObjectStore> store, StreamMetadata metadata)
      : store_(std::move(store)), metadata_(std::move(metadata)) {}

  Result<std::optional<int64_t>> Latest(const std::string& folder);

  std::shared_ptr<ObjectStore> store_;
  StreamMetadata metadata_;
};

}  // namespace basin::stream
