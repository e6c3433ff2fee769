package io.stasis.storage.btrfs;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import java.util.LinkedHashMap;
import java.util.Map;

/** The root store's failures: {@code runtime_failed} naming the step, the sandbox and the checkpoint. */
final class RootStoreErrors {
    private RootStoreErrors() {
    }

    static StasisException checkpointFailure(String step, SandboxId id, CheckpointId checkpoint, String problem) {
        return checkpointFailure(step, id, checkpoint, problem, null);
    }

    /** {@code runtime_failed} naming the step, sandbox (if any) and checkpoint in message and details. */
    static StasisException checkpointFailure(String step, SandboxId id, CheckpointId checkpoint, String problem, Throwable cause) {
        return new StasisException(ErrorCode.RUNTIME_FAILED, step + " failed for " + subject(id, checkpoint) + ": " + problem,
                checkpointDetails(Map.of(), step, id, checkpoint), cause);
    }

    /** A tool failure, with the step, sandbox and checkpoint added to what it carries (errno, stderr). */
    static StasisException withCheckpoint(StasisException e, String step, SandboxId id, CheckpointId checkpoint) {
        return new StasisException(e.code(), step + " failed for " + subject(id, checkpoint) + ": " + e.getMessage(),
                checkpointDetails(e.details(), step, id, checkpoint), e);
    }

    private static String subject(SandboxId id, CheckpointId checkpoint) {
        return id == null ? "checkpoint " + checkpoint : "sandbox " + id + ", checkpoint " + checkpoint;
    }

    private static Map<String, Object> checkpointDetails(Map<String, Object> from, String step, SandboxId id, CheckpointId checkpoint) {
        var details = new LinkedHashMap<String, Object>(from);
        details.putIfAbsent("step", step);
        if (id != null) details.put("sandbox", id.value());
        details.put("checkpoint", checkpoint.value());
        return details;
    }

    static StasisException withSandbox(StasisException e, SandboxId id, String step) {
        var details = new LinkedHashMap<String, Object>(e.details());
        details.put("sandbox", id.value());
        details.putIfAbsent("step", step);
        return new StasisException(e.code(), step + " failed for sandbox " + id + ": " + e.getMessage(), details, e);
    }
}
