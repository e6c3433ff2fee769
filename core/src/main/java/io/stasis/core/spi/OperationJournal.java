package io.stasis.core.spi;

import io.stasis.core.journal.Operation;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import java.util.List;

/**
 * Operations in progress, at most one per sandbox: the journal that lets a restarted service finish
 * or undo a multi-step change. Writes are atomic and durable when the call returns; thread-safe.
 */
public interface OperationJournal {
    /** Records that an operation begins (replacing a finished one's leftover). */
    void beginOperation(Operation operation);

    /** Records the outcome and ends the sandbox's operation, in one transaction. */
    void completeOperation(Sandbox outcome);

    /** Ends the sandbox's operation without changing the sandbox (it failed and nothing changed). */
    void abandonOperation(SandboxId sandbox);

    List<Operation> pendingOperations();
}
