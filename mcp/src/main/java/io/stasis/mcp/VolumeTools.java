package io.stasis.mcp;

import static io.stasis.mcp.JsonSchemas.bool;
import static io.stasis.mcp.JsonSchemas.integer;
import static io.stasis.mcp.JsonSchemas.object;
import static io.stasis.mcp.JsonSchemas.string;

import io.stasis.mcp.StasisTool.Kind;
import io.stasis.sdk.VolumeInfo;
import java.util.List;
import java.util.stream.Collectors;

/** Tools on volumes, files that outlive sandboxes: make one, list them, snapshot one, delete one. sandbox_create mounts them. */
final class VolumeTools {
    private VolumeTools() {
    }

    static List<StasisTool> all() {
        return List.of(create(), list(), snapshot(), delete());
    }

    private static String describe(VolumeInfo v) {
        return v.name() + " (" + v.id() + ", " + v.sizeMb() + " MB"
                + (v.mountedBy().isEmpty() ? "" : ", mounted by " + v.mountedBy().size() + " sandbox(es)") + ")";
    }

    private static StasisTool create() {
        var schema = object()
                .required("name", string("The volume's name, unique among yours: 1-63 of a-z 0-9 . _ -."))
                .required("sizeMb", integer("Its size in MB: writes past it fail with 'No space left on device'.", 1, 16_777_216))
                .optional("fromSnapshot", string("A snapshot id (vsnap_...) of one of your volumes to start from (its files at that moment)."))
                .build();
        return new StasisTool("volume_create", "Create volume",
                "Makes a volume: a filesystem of its own that outlives sandboxes, shared by every sandbox that mounts it "
                        + "(sandbox_create volumes=['NAME:/path']), read-write or read-only. Answers the volume.",
                schema, Kind.CHANGE, (client, args) -> {
                    String name = args.string("name");
                    String snapshot = args.optString("fromSnapshot");
                    VolumeInfo volume = snapshot != null ? client.volumes().createFromSnapshot(name, snapshot)
                            : client.volumes().create(name, args.integer("sizeMb", 0, 1, 16_777_216));
                    return ToolResult.of("created volume " + describe(volume), volume);
                });
    }

    private static StasisTool list() {
        return new StasisTool("volume_list", "List volumes", "Lists your volumes with their size and the sandboxes that mount them.",
                object().build(), Kind.READ, (client, args) -> {
                    var volumes = client.volumes().list();
                    String text = volumes.isEmpty() ? "no volumes" : volumes.stream().map(VolumeTools::describe).collect(Collectors.joining("\n"));
                    return ToolResult.list(text, volumes);
                });
    }

    private static StasisTool snapshot() {
        return new StasisTool("volume_snapshot", "Snapshot volume", "Takes a read-only snapshot of a volume's files as they are now "
                + "(instant, whatever the size); volume_create fromSnapshot makes a new volume from it.",
                object().required("volume", string("The volume's name or id.")).build(), Kind.CHANGE, (client, args) -> {
                    var snapshot = client.volumes().snapshot(args.string("volume"));
                    return ToolResult.of("snapshot " + snapshot.id() + " of volume " + args.string("volume"), snapshot);
                });
    }

    private static StasisTool delete() {
        var schema = object()
                .required("volume", string("The volume's name or id."))
                .optional("force", bool("true: delete it even while sandboxes mount it (they lose it); default false: refused then."))
                .build();
        return new StasisTool("volume_delete", "Delete volume", "Deletes a volume and its files for good; its snapshots and syncs go with it.", schema, Kind.DESTRUCTIVE,
                (client, args) -> {
                    String volume = args.string("volume");
                    client.volumes().delete(volume, args.bool("force", false));
                    return ToolResult.text("deleted volume " + volume);
                });
    }
}
