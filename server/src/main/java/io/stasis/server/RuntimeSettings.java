package io.stasis.server;

import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.RuntimeKind;
import io.stasis.runtime.runc.RunscConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;

/**
 * Which runtimes the service runs sandboxes in.
 *
 * @param defaultRuntime the runtime of a sandbox created without one; the warm pool's
 * @param allowed        the runtimes a create may ask for (the default among them)
 * @param runsc          gVisor's runsc, needed when gvisor is allowed
 */
public record RuntimeSettings(RuntimeKind defaultRuntime, Set<RuntimeKind> allowed, Path runsc) {

    public RuntimeSettings {
        allowed = Set.copyOf(allowed);
    }

    /**
     * runc by default; gVisor allowed too where {@code ./stasis setup} installed runsc and saw it
     * run a sandbox (or where $STASIS_RUNSC names one).
     */
    public static RuntimeSettings defaults() {
        String env = System.getenv("STASIS_RUNSC");
        boolean named = env != null && !env.isBlank();
        Path runsc = named ? Path.of(env) : RunscConfig.INSTALLED;
        boolean gvisor = named ? Files.isExecutable(runsc) : RunscConfig.installedAndVerified();
        return new RuntimeSettings(RuntimeKind.RUNC, gvisor ? EnumSet.allOf(RuntimeKind.class) : EnumSet.of(RuntimeKind.RUNC), runsc);
    }

    /** Applies one {@code --runtime…} or {@code --runsc} flag; empty if the flag is not one of these. */
    Optional<RuntimeSettings> with(String flag, String value) {
        try {
            return Optional.ofNullable(switch (flag) {
                case "--runtime" -> {
                    var kind = RuntimeKind.parse(flag, value);
                    var more = EnumSet.copyOf(allowed);
                    more.add(kind); // the default is allowed; --runtimes-allowed, given after, may say otherwise
                    yield new RuntimeSettings(kind, more, runsc);
                }
                case "--runtimes-allowed" -> {
                    var kinds = EnumSet.noneOf(RuntimeKind.class);
                    for (String name : value.split(",")) if (!name.isBlank()) kinds.add(RuntimeKind.parse(flag, name.strip()));
                    if (kinds.isEmpty()) throw new ServerConfig.UsageException(flag + " needs at least one of " + RuntimeKind.names());
                    yield new RuntimeSettings(defaultRuntime, kinds, runsc);
                }
                case "--runsc" -> new RuntimeSettings(defaultRuntime, allowed, Path.of(value));
                default -> null;
            });
        } catch (StasisException e) {
            throw new ServerConfig.UsageException(e.getMessage());
        }
    }

    /** The settings as a whole make sense: checked once every flag is read. */
    RuntimeSettings checked() {
        if (!allowed.contains(defaultRuntime))
            throw new ServerConfig.UsageException("--runtime " + defaultRuntime + " is not among --runtimes-allowed " + names(allowed));
        if (allowed.contains(RuntimeKind.GVISOR) && !Files.isExecutable(runsc))
            throw new ServerConfig.UsageException("gvisor is allowed but there is no runsc at " + runsc
                    + " (./stasis setup installs it; or give --runsc PATH, or --runtimes-allowed runc)");
        return this;
    }

    private static String names(Set<RuntimeKind> kinds) {
        return String.join(",", RuntimeKind.wireNames(kinds));
    }

    static final String USAGE = """
              --runtime runc|gvisor    runtime of a sandbox created without one, and of the warm pool (default runc)
              --runtimes-allowed LIST  runtimes a create may ask for, comma-separated (default runc, and gvisor where
                                       ./stasis setup installed runsc and saw it run a sandbox)
              --runsc PATH             gVisor's runsc (default $STASIS_RUNSC or /opt/stasis/runsc/runsc)
            """;
}
