package io.stasis.server;

import java.util.Optional;

/**
 * The audit log: JSON lines in {@code <data-dir>/audit/}, a new file past {@code maxFileBytes},
 * at most {@code keepFiles} files (the oldest go).
 */
public record AuditSettings(long maxFileBytes, int keepFiles) {
    /** 16 MiB a file, 32 files: 512 MiB at most, read whole by a listing one file at a time. */
    public static final AuditSettings DEFAULTS = new AuditSettings(16L << 20, 32);

    /** Applies one {@code --audit-…} flag; empty if the flag is not one of these. */
    Optional<AuditSettings> with(String flag, String value) {
        return Optional.ofNullable(switch (flag) {
            case "--audit-file-size" -> {
                long bytes = ServerConfig.size(flag, value);
                if (bytes < 4096) throw new ServerConfig.UsageException(flag + " must be at least 4K, was '" + value + "'");
                yield new AuditSettings(bytes, keepFiles);
            }
            case "--audit-files" -> new AuditSettings(maxFileBytes, ServerConfig.integer(flag, value.strip(), 1, 100_000));
            default -> null;
        });
    }

    static final String USAGE = """
              --audit-file-size SIZE   the audit log (data-dir/audit/, JSON lines: every API call and egress
                                       decision) begins a new file past SIZE (default 16M)
              --audit-files N          audit files kept, the oldest removed (default 32)
            """;
}
