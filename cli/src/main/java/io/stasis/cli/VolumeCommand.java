package io.stasis.cli;

import io.stasis.sdk.StasisJson;
import io.stasis.sdk.VolumeInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis volume create|ls|rm|snapshot|sync|sync-rm}: files that outlive sandboxes. */
@Command(name = "volume", mixinStandardHelpOptions = true,
        description = {"Volumes: directory trees with a size that outlive sandboxes (mount one with `stasis create --volume NAME:/path`).",
                "Any number of sandboxes may mount one, read-write or read-only; nothing coordinates them (last writer wins)."},
        subcommands = {VolumeCommand.Create.class, VolumeCommand.Ls.class, VolumeCommand.Rm.class, VolumeCommand.Snapshot.class,
                VolumeCommand.Sync.class, VolumeCommand.SyncRm.class})
final class VolumeCommand extends CommandGroup {
    @ParentCommand
    StasisCommand root;

    @Command(name = "create", mixinStandardHelpOptions = true, description = "Create a volume: empty, from a snapshot, or from a sync.")
    static final class Create implements Callable<Integer> {
        @ParentCommand
        VolumeCommand parent;

        @Parameters(index = "0", paramLabel = "NAME", description = "1-63 of a-z 0-9 . _ -")
        String name;

        @Option(names = "--size-mb", paramLabel = "N", description = "Size in MiB (default 10240).")
        Long sizeMb;

        @Option(names = "--from-snapshot", paramLabel = "VSNAP", description = "Start as a copy of this snapshot (O(1)).")
        String fromSnapshot;

        @Option(names = "--from-sync", paramLabel = "VSYNC|VOL", description = "Restore this sync (or a volume's newest) from the blob store.")
        String fromSync;

        @Override
        public Integer call() {
            var volumes = parent.root.client().volumes();
            if (fromSnapshot != null && fromSync != null) throw new UsageException("give --from-snapshot or --from-sync, not both");
            VolumeInfo v = fromSnapshot != null ? volumes.createFromSnapshot(name, fromSnapshot)
                    : fromSync != null ? volumes.createFromSync(name, fromSync)
                    : volumes.create(name, sizeMb == null ? 10_240 : sizeMb);
            print(parent.root, v);
            return ExitCodes.OK;
        }
    }

    @Command(name = "ls", mixinStandardHelpOptions = true, description = "List volumes.")
    static final class Ls implements Callable<Integer> {
        @ParentCommand
        VolumeCommand parent;

        @Override
        public Integer call() {
            var root = parent.root;
            List<VolumeInfo> volumes = root.client().volumes().list();
            return root.printList(volumes, list -> {
                var table = Table.withHeaders("ID", "NAME", "SIZE MB", "SANDBOXES", "CREATED");
                for (VolumeInfo v : list)
                    table.row(v.id(), v.name(), Long.toString(v.sizeMb()), Long.toString(v.mountedBy().stream().map(VolumeInfo.Mount::sandboxId).distinct().count()), HumanFormat.time(v.createdAt()));
                return table.render();
            });
        }
    }

    @Command(name = "rm", mixinStandardHelpOptions = true,
            description = {"Delete volumes (refused while a sandbox mounts one, unless --force: those sandboxes are stopped and lose the mount).",
                    "Prints each deleted name; goes on past failures and exits with the first failure's code."})
    static final class Rm implements Callable<Integer> {
        @ParentCommand
        VolumeCommand parent;

        @Option(names = "--force", description = "Stop the sandboxes that mount it, then delete.")
        boolean force;

        @Parameters(index = "0..*", arity = "1..*", paramLabel = "VOLUME", description = "Volume ids or names.")
        List<String> names = new ArrayList<>();

        @Override
        public Integer call() {
            return DeleteEach.run(parent.root, names, n -> parent.root.client().volumes().delete(n, force));
        }
    }

    @Command(name = "snapshot", mixinStandardHelpOptions = true, description = "Take a read-only snapshot of a volume; prints its id.")
    static final class Snapshot implements Callable<Integer> {
        @ParentCommand
        VolumeCommand parent;

        @Parameters(index = "0", paramLabel = "VOLUME")
        String volume;

        @Override
        public Integer call() {
            var s = parent.root.client().volumes().snapshot(volume);
            parent.root.io().out().println(parent.root.json() ? StasisJson.write(s) : s.id());
            return ExitCodes.OK;
        }
    }

    @Command(name = "sync", mixinStandardHelpOptions = true,
            description = "Make a volume's current content durable in the blob store (incremental); prints the sync's id.")
    static final class Sync implements Callable<Integer> {
        @ParentCommand
        VolumeCommand parent;

        @Parameters(index = "0", paramLabel = "VOLUME")
        String volume;

        @Override
        public Integer call() {
            var s = parent.root.client().volumes().sync(volume);
            parent.root.io().out().println(parent.root.json() ? StasisJson.write(s) : s.id() + " " + s.streamBytes() + " bytes sent");
            return ExitCodes.OK;
        }
    }

    @Command(name = "sync-rm", mixinStandardHelpOptions = true,
            description = {"Delete syncs of a volume from the blob store (later syncs stay restorable); the store's garbage "
                    + "collection then frees what only they held.",
                    "Prints each deleted id; goes on past failures and exits with the first failure's code."})
    static final class SyncRm implements Callable<Integer> {
        @ParentCommand
        VolumeCommand parent;

        @Parameters(index = "0", paramLabel = "VOLUME")
        String volume;

        @Parameters(index = "1..*", arity = "1..*", paramLabel = "SYNC", description = "Sync ids (vsync_...).")
        List<String> syncs = new ArrayList<>();

        @Override
        public Integer call() {
            return DeleteEach.run(parent.root, syncs, s -> parent.root.client().volumes().deleteSync(volume, s));
        }
    }

    private static void print(StasisCommand root, VolumeInfo v) {
        root.io().out().println(root.json() ? StasisJson.write(v) : v.id() + " " + v.name());
    }
}
