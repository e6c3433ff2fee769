package io.stasis.templates.oci;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What an image's config says a container starts with, and what it is.
 *
 * @param digest       the config blob's digest: the image's identity (docker's image id), the same however it was transported
 * @param os           e.g. {@code linux}; empty when the config does not say
 * @param architecture e.g. {@code amd64}; empty when the config does not say
 * @param env          {@code KEY=value} strings in order ({@code Env})
 * @param workingDir   {@code WorkingDir}, when not empty
 * @param user         {@code User} ({@code name}, {@code uid}, {@code uid:gid}...), when not empty
 * @param cmd          {@code Cmd}
 * @param entrypoint   {@code Entrypoint}
 * @param diffIds      {@code rootfs.diff_ids}: the digests of the uncompressed layers, in order
 */
public record ImageConfig(Digest digest, Optional<String> os, Optional<String> architecture, List<String> env,
                          Optional<String> workingDir, Optional<String> user, List<String> cmd, List<String> entrypoint,
                          List<Digest> diffIds) {
    public ImageConfig {
        Objects.requireNonNull(digest);
        Objects.requireNonNull(os);
        Objects.requireNonNull(architecture);
        env = List.copyOf(env);
        Objects.requireNonNull(workingDir);
        Objects.requireNonNull(user);
        cmd = List.copyOf(cmd);
        entrypoint = List.copyOf(entrypoint);
        diffIds = List.copyOf(diffIds);
    }

    /** {@link #env()} as a map: split at the first {@code =} (none: an empty value); a later duplicate wins. */
    public Map<String, String> envMap() {
        var map = new LinkedHashMap<String, String>();
        for (String e : env) {
            int eq = e.indexOf('=');
            map.put(eq < 0 ? e : e.substring(0, eq), eq < 0 ? "" : e.substring(eq + 1));
        }
        return map;
    }

    /** What a container runs by default: the entrypoint followed by the command (either may be empty). */
    public List<String> command() {
        var all = new ArrayList<>(entrypoint);
        all.addAll(cmd);
        return List.copyOf(all);
    }
}
