package io.stasis.cli;

import io.stasis.sdk.Hibernation;
import io.stasis.sdk.LifecyclePolicy;
import io.stasis.sdk.Resources;
import io.stasis.sdk.Sandbox;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis info ID}. */
@Command(name = "info", aliases = "inspect", mixinStandardHelpOptions = true,
        description = "Show one sandbox.")
final class InfoCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Override
    public Integer call() {
        Sandbox sandbox = root.client().sandboxes().get(id);
        if (root.json()) {
            root.printJson(sandbox);
        } else {
            root.io().out().print(render(sandbox));
        }
        return ExitCodes.OK;
    }

    static String render(Sandbox s) {
        var table = Table.withoutHeaders()
                .row("ID", s.id())
                .row("NAME", s.name())
                .row("TEMPLATE", s.template())
                .row("RUNTIME", s.runtime())
                .row("STATE", state(s))
                .row("GENERATION", s.generation() > 0 ? s.generation() : null) // 0: a server from before generations
                .row("DURABLE", s.durableImage() == null ? null
                        : s.durableImage().checkpointId() + " " + s.durableImage().digest() + " (" + HumanFormat.time(s.durableImage().takenAt()) + ")")
                .row("PARENT", s.parentId())
                .row("CHECKPOINT", s.checkpointId())
                .row("CREATED", HumanFormat.time(s.createdAt()));
        Resources r = s.resources();
        if (r != null) {
            table.row("CPUS", HumanFormat.number(r.cpus()))
                    .row("MEMORY", r.memoryMb() == null ? null : HumanFormat.size(r.memoryMb() * 1024L * 1024L))
                    .row("PIDS", r.pids())
                    .row("DISK", r.diskMb() == null ? null : HumanFormat.size(r.diskMb() * 1024L * 1024L));
        }
        pairs(table, "ENV", s.env());
        pairs(table, "METADATA", s.metadata());
        // bucket mounts, one row each: the secret's name, never a value (the server has none to give)
        var mounts = s.info().mounts();
        for (int i = 0; i < mounts.size(); i++) {
            var m = mounts.get(i);
            table.row(i == 0 ? "MOUNTS" : "", m.path() + " <- " + m.type() + " " + m.endpoint() + "/" + m.bucket()
                    + (m.prefix() == null || m.prefix().isEmpty() ? "" : "/" + m.prefix()) + (m.readOnly() ? " (ro)" : "")
                    + " key " + m.credentialsSecret());
        }
        LifecyclePolicy p = s.lifecycle();
        if (p != null) {
            var policy = new LinkedHashMap<String, String>();
            policy.put("pauseAfterIdle", HumanFormat.duration(p.pauseAfterIdle()));
            policy.put("standbyAfterIdle", HumanFormat.duration(p.standbyAfterIdle()));
            policy.put("hibernateAfterIdle", HumanFormat.duration(p.hibernateAfterIdle()));
            policy.put("stopAfterIdle", HumanFormat.duration(p.stopAfterIdle()));
            policy.put("deleteAfterIdle", HumanFormat.duration(p.deleteAfterIdle()));
            policy.put("maxAge", HumanFormat.maxAge(p));
            policy.put("autoResume", String.valueOf(p.autoResume()));
            pairs(table, "LIFECYCLE", policy);
        }
        return table.render();
    }

    /** {@code running}, {@code stopped (idle)}, {@code hibernated (image 412 KiB, 2026-11-29T10:05:00Z)}. */
    static String state(Sandbox s) {
        Hibernation h = s.hibernation();
        if (h != null) {
            return s.state() + " (image " + HumanFormat.size(h.imageBytes()) + ", " + HumanFormat.time(h.takenAt()) + ")";
        }
        return s.stateReason() == null ? s.state() : s.state() + " (" + s.stateReason() + ")";
    }

    /** One row per pair, the label on the first only. */
    private static void pairs(Table table, String label, Map<String, String> pairs) {
        if (pairs.isEmpty()) {
            table.row(label, null);
            return;
        }
        boolean first = true;
        for (var e : pairs.entrySet()) {
            table.row(first ? label : "", e.getKey() + "=" + e.getValue());
            first = false;
        }
    }
}
