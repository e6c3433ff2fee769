package io.stasis.core.sandbox;

import io.stasis.core.error.StasisException;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Which boundary a sandbox runs behind, chosen when it is made and kept by its forks and
 * checkpoints: the host kernel behind namespaces and cgroups (runc), or gVisor's user-space kernel
 * in between (runsc), which the host kernel sees only through the sentry's few system calls.
 */
public enum RuntimeKind {
    RUNC("runc"),
    GVISOR("gvisor");

    private final String wireName;

    RuntimeKind(String wireName) {
        this.wireName = wireName;
    }

    /** The name in the API, the CLI and the catalog. */
    public String wireName() {
        return wireName;
    }

    /** The kind named {@code name}; {@code invalid_request} naming {@code field} and the names there are otherwise. */
    public static RuntimeKind parse(String field, String name) {
        for (var kind : values()) if (kind.wireName.equals(name)) return kind;
        throw StasisException.invalid(field, "unknown runtime \"" + name + "\"; the runtimes are " + names());
    }

    /** The names of {@code kinds}, sorted: how a set of runtimes is shown, stored and named in messages. */
    public static List<String> wireNames(Collection<RuntimeKind> kinds) {
        return kinds.stream().map(RuntimeKind::wireName).sorted().toList();
    }

    /** Every kind's name, comma-separated. */
    public static String names() {
        return Arrays.stream(values()).map(RuntimeKind::wireName).collect(Collectors.joining(", "));
    }

    @Override
    public String toString() {
        return wireName;
    }
}
