package io.stasis.network.linux;

import io.stasis.core.error.StasisException;
import io.stasis.host.ToolRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The only class that runs {@code nft}. A script is applied with {@code nft -f} as one transaction:
 * all of it or none of it.
 */
final class Nft {
    private static final Logger log = LoggerFactory.getLogger(Nft.class);
    private static final Pattern PACKETS = Pattern.compile("packets (\\d+)");

    private final Path binary = ToolRunner.locate("nft");
    private final Duration timeout;

    Nft(Duration timeout) {
        this.timeout = timeout;
    }

    /** Applies {@code script} atomically; {@code step} names it in errors ("open sbx_…"). */
    void apply(String step, String script) {
        Path file = null;
        try {
            file = Files.createTempFile("stasis-nft", ".nft");
            Files.writeString(file, script);
            var result = ToolRunner.run(List.of(binary.toString(), "-f", file.toString()), timeout);
            if (result.exitCode() != 0) {
                log.atWarn().addKeyValue("step", step).addKeyValue("script", script).log("nft refused a script");
                throw StasisException.runtimeFailed("-", "nft " + step, result.stderrTail(), null);
            }
        } catch (IOException | ToolRunner.TimedOut e) {
            throw StasisException.runtimeFailed("-", "nft " + step, e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw StasisException.runtimeFailed("-", "nft " + step, "interrupted", e);
        } finally {
            if (file != null) try {
                Files.deleteIfExists(file);
            } catch (IOException ignored) {
                // a temporary file; the next boot's tmp cleaning removes it
            }
        }
    }

    /** Whether the table exists. */
    boolean hasTable(String table) {
        return run("list", "table", "ip", table).exitCode() == 0;
    }

    /** The chain names of a table (empty if it does not exist). */
    List<String> chains(String table) {
        var result = run("list", "chains", "ip");
        if (result.exitCode() != 0) return List.of();
        var names = new java.util.ArrayList<String>();
        boolean inTable = false;
        for (String line : result.stdout()) {
            String l = line.strip();
            if (l.startsWith("table ")) inTable = l.equals("table ip " + table + " {");
            else if (inTable && l.startsWith("chain ")) names.add(l.substring(6, l.indexOf(' ', 6)));
        }
        return names;
    }

    /** The packet count of a named counter, 0 if it does not exist. */
    long counter(String table, String name) {
        var result = run("list", "counter", "ip", table, name);
        if (result.exitCode() != 0) return 0;
        Matcher m = PACKETS.matcher(result.stdoutText());
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    private ToolRunner.Result run(String... args) {
        var argv = new java.util.ArrayList<>(List.of(binary.toString()));
        argv.addAll(List.of(args));
        try {
            return ToolRunner.run(argv, timeout);
        } catch (IOException | ToolRunner.TimedOut e) {
            throw StasisException.runtimeFailed("-", "nft " + String.join(" ", args), e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw StasisException.runtimeFailed("-", "nft", "interrupted", e);
        }
    }
}
