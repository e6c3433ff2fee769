package io.stasis.core.process;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;

/**
 * What the service keeps beside a background process inside the sandbox (the runtime's opaque
 * label): command, working directory, tag, keepAlive and start time, as a properties text. Kept
 * in the sandbox, it travels with hibernations and forks like the process's output does.
 */
record ProcessLabel(List<String> cmd, Optional<String> cwd, Optional<String> tag, Instant startedAt, boolean keepAlive,
                    Optional<Instant> keepAliveUntil, boolean stdin, boolean terminal) {

    byte[] encode() {
        var p = new Properties();
        p.setProperty("cmd.count", Integer.toString(cmd.size()));
        for (int i = 0; i < cmd.size(); i++) p.setProperty("cmd." + i, cmd.get(i));
        cwd.ifPresent(c -> p.setProperty("cwd", c));
        tag.ifPresent(t -> p.setProperty("tag", t));
        p.setProperty("startedAt", startedAt.toString());
        p.setProperty("keepAlive", Boolean.toString(keepAlive));
        keepAliveUntil.ifPresent(u -> p.setProperty("keepAliveUntil", u.toString()));
        p.setProperty("stdin", Boolean.toString(stdin));
        p.setProperty("terminal", Boolean.toString(terminal));
        var out = new ByteArrayOutputStream();
        try {
            p.store(out, null);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /** The label back; a damaged one (the sandbox owns the file) reads as what can be read. */
    static ProcessLabel decode(byte[] bytes) {
        var p = new Properties();
        try {
            p.load(new StringReader(new String(bytes, StandardCharsets.ISO_8859_1)));
        } catch (IOException | IllegalArgumentException e) {
            return new ProcessLabel(List.of(), Optional.empty(), Optional.empty(), Instant.EPOCH, false, Optional.empty(), false, false);
        }
        var cmd = new ArrayList<String>();
        int count = parseInt(p.getProperty("cmd.count"));
        for (int i = 0; i < count && i < 4096; i++) cmd.add(p.getProperty("cmd." + i, ""));
        return new ProcessLabel(cmd, Optional.ofNullable(p.getProperty("cwd")), Optional.ofNullable(p.getProperty("tag")),
                instant(p.getProperty("startedAt")).orElse(Instant.EPOCH), Boolean.parseBoolean(p.getProperty("keepAlive")),
                instant(p.getProperty("keepAliveUntil")), Boolean.parseBoolean(p.getProperty("stdin")),
                Boolean.parseBoolean(p.getProperty("terminal")));
    }

    private static int parseInt(String s) {
        try {
            return s == null ? 0 : Integer.parseInt(s);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static Optional<Instant> instant(String s) {
        try {
            return s == null ? Optional.empty() : Optional.of(Instant.parse(s));
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }
}
