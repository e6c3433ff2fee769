package io.stasis.runtime.runc;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import java.util.Map;

/** The two full disks a write into a sandbox's root meets, told apart: the sandbox's own, or the host's pool. */
final class DiskFull {
    private DiskFull() {
    }

    static StasisException inSandbox(SandboxId id, String step, String why, Exception cause) {
        return new StasisException(ErrorCode.QUOTA_EXCEEDED, "the disk of sandbox " + id + " is full (" + why
                + "): no process can start, as its output could not be kept; delete files through the files API to make room",
                Map.of("sandbox", id.value(), "step", step), cause);
    }

    /** The host's pool, not the sandbox's own limit, is out of room: every sandbox on it is refused alike. */
    static StasisException inPool(SandboxId id, String step, Exception cause) {
        return new StasisException(ErrorCode.HOST_BUSY, "the host's disk pool is full (ENOSPC at " + step + " of sandbox " + id
                + "): nothing was changed; free room on the host (delete sandboxes, checkpoints or volumes) and try again",
                Map.of("sandbox", id.value(), "step", step), cause);
    }
}
