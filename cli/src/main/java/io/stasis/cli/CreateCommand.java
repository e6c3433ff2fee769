package io.stasis.cli;

import io.stasis.sdk.BucketMount;
import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.EgressPolicy;
import io.stasis.sdk.Sandbox;
import io.stasis.sdk.VolumeMount;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/** {@code stasis create}: prints the new sandbox's id. */
@Command(name = "create", mixinStandardHelpOptions = true,
        description = "Create a sandbox and print its id.")
final class CreateCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Option(names = "--template", paramLabel = "T", description = "Template (default: the server's, base).")
    String template;

    @Option(names = "--name", paramLabel = "N", description = "Unique name: 1-63 of a-z 0-9 . _ -")
    String name;

    @Option(names = "--runtime", paramLabel = "runc|gvisor", description = "What runs the sandbox: runc (a container on "
            + "the host's kernel) or gvisor (gVisor's user-space kernel in between; default: the server's, runc). Its forks keep it.")
    String runtime;

    @Option(names = "--env", paramLabel = "K=V", description = "Environment for every command (repeatable).")
    Map<String, String> env = new LinkedHashMap<>();

    @Option(names = "--meta", paramLabel = "K=V", description = "Metadata label (repeatable).")
    Map<String, String> metadata = new LinkedHashMap<>();

    @Option(names = "--cpus", paramLabel = "X", description = "CPUs, 0.1-64.")
    Double cpus;

    @Option(names = "--memory-mb", paramLabel = "N", description = "Memory in MiB, 16-1048576.")
    Integer memoryMb;

    @Option(names = "--pids", paramLabel = "N", description = "Maximum number of processes, 16-1000000.")
    Integer pids;

    @Option(names = "--disk-mb", paramLabel = "N", description = "Room in MiB for what the sandbox writes itself, the "
            + "template's files not counted (64 up to the server's maximum); past it writes fail with \"Disk quota exceeded\".")
    Integer diskMb;

    @Option(names = "--egress-default", paramLabel = "allow|deny", converter = EgressOptions.DefaultConverter.class,
            description = "Network policy: what happens to destinations no entry names (default: deny). "
                    + "Without --egress-default, --allow and --deny the server's default policy applies.")
    EgressPolicy.Action egressDefault;

    @Option(names = "--volume", paramLabel = "NAME:/path[:ro]",
            description = "Mount a volume (id or name) at an absolute path, read-only with :ro (repeatable).")
    List<String> volumes = new ArrayList<>();

    @Option(names = "--mount", paramLabel = "endpoint=URL,bucket=NAME,path=/PATH,secret=SECRET[,prefix=P][,region=R][,ro]",
            description = "Mount an existing S3 bucket at an absolute path (repeatable). SECRET names one of your secrets "
                    + "(stasis secret set) holding ACCESS_KEY_ID:SECRET_ACCESS_KEY; the key stays on the server. A value with a "
                    + "comma is quoted: prefix=\"runs,2026\".")
    List<String> mounts = new ArrayList<>();

    /** The policy's --allow and --deny lists. */
    @Mixin
    EgressOptions egress;

    @Option(names = "--from-checkpoint", paramLabel = "CKPT", description = "Make the sandbox from a checkpoint: this "
            + "server's, or a durable one written by any server sharing its blob store. Its settings come from the checkpoint; "
            + "only --name may be given with it.")
    String fromCheckpoint;

    /** Idle-policy settings that differ from the server's defaults. */
    @Mixin
    LifecycleOptions lifecycle;

    @Option(names = "--checkpoint-every", paramLabel = "D", converter = DurationOrNever.Converter.class,
            description = "Keep the sandbox restorable on another node while it runs: a durable checkpoint with memory this "
                    + "often (at least 5s), from which another node resumes it if its node is lost (default: the server's, never).")
    DurationOrNever checkpointEvery;

    @Override
    public Integer call() {
        if (fromCheckpoint != null) {
            Sandbox restored;
            try (var progress = Progress.ticking(root, "restoring " + fromCheckpoint)) {
                restored = root.client().sandboxes().create(CreateSandboxRequest.fromCheckpoint(fromCheckpoint, name));
            }
            if (root.json()) root.printJson(restored);
            else root.io().out().println(restored.id());
            return ExitCodes.OK;
        }
        var request = CreateSandboxRequest.builder().template(template).name(name).env(env).metadata(metadata).runtime(runtime);
        if (cpus != null) request.cpus(cpus);
        if (memoryMb != null) request.memoryMb(memoryMb);
        if (pids != null) request.pids(pids);
        if (diskMb != null) request.diskMb(diskMb);
        request.lifecycle(lifecycle.toUpdate());
        if (checkpointEvery != null && checkpointEvery.duration() != null) request.checkpointEvery(checkpointEvery.duration());
        try {
            for (String v : volumes) request.volume(VolumeMount.parse(v));
            for (String m : mounts) request.mount(BucketMount.parse(m));
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
        if (egressDefault != null || !egress.isEmpty()) request.network(egress.policy(egressDefault));
        Sandbox sandbox;
        // The first create from a template builds it: that can take minutes.
        try (var progress = Progress.ticking(root, "creating " + (name != null ? name : "a sandbox")
                + (template != null ? " from " + template : ""))) {
            sandbox = root.client().sandboxes().create(request.build());
        }
        if (root.json()) {
            root.printJson(sandbox);
        } else {
            root.io().out().println(sandbox.id());
        }
        return ExitCodes.OK;
    }
}
