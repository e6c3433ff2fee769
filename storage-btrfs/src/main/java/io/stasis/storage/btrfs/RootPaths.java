package io.stasis.storage.btrfs;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.sandbox.SandboxId;
import java.nio.file.Path;

/** Where a {@link BtrfsRootStore} keeps sandbox roots and checkpoint snapshots (the layout: see there). */
record RootPaths(BtrfsPool pool) {
    private static final String REPLACED = ".replaced";

    Path root(SandboxId id) {
        return pool.rootsDir().resolve(id.value()); // SandboxId is validated: no '/' or '..'
    }

    /** Where {@link BtrfsRootStore#replaceRoot} puts the old root: no sandbox id has a dot. */
    Path replaced(SandboxId id) {
        return pool.rootsDir().resolve(id.value() + REPLACED);
    }

    /** The sandbox an entry of {@code roots/} belongs to: its name, without the suffix of a replaced root. */
    static String sandboxOf(String entry) {
        return entry.endsWith(REPLACED) ? entry.substring(0, entry.length() - REPLACED.length()) : entry;
    }

    Path snapshot(CheckpointId checkpoint) {
        return pool.checkpointsDir().resolve(checkpoint.value()); // CheckpointId is validated: no '/' or '..'
    }
}
