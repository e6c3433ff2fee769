package io.stasis.templates;

import io.stasis.host.ToolRunner;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/** The only class that runs busybox: its applet list, its version, one applet. */
final class Busybox {
    private static final Pattern VERSION = Pattern.compile("BusyBox v(\\S+)");
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final Path binary;

    Busybox(Path binary) {
        this.binary = binary;
    }

    /** Every applet name, from {@code busybox --list}. */
    List<String> applets() {
        var result = invoke("busybox --list", List.of("--list"));
        requireSuccess("busybox --list", result);
        return result.stdout().stream().map(String::strip).filter(s -> !s.isEmpty()).toList();
    }

    /** E.g. {@code 1.35.0}, from the banner busybox prints before its help. */
    String version() {
        var result = invoke("busybox --help", List.of("--help"));
        var m = VERSION.matcher(result.stdoutText() + "\n" + result.stderrText());
        return m.find() ? m.group(1) : "unknown";
    }

    /** Runs one applet, e.g. {@code applet("echo", "hi")}; returns its stdout. */
    String applet(String... appletAndArgs) {
        String step = "busybox " + appletAndArgs[0];
        var result = invoke(step, List.of(appletAndArgs));
        requireSuccess(step, result);
        return result.stdoutText();
    }

    private static void requireSuccess(String step, ToolRunner.Result result) {
        if (result.exitCode() != 0)
            throw Failures.tool(step, "exit " + result.exitCode() + ": " + result.stderrTail(), Map.of("stderr", result.stderrTail()), null);
    }

    private ToolRunner.Result invoke(String step, List<String> args) {
        var argv = new ArrayList<String>();
        argv.add(binary.toString());
        argv.addAll(args);
        try {
            return ToolRunner.run(argv, TIMEOUT);
        } catch (IOException e) {
            throw Failures.tool(step, "cannot run " + binary + ": " + e.getMessage(), Map.of(), e);
        } catch (ToolRunner.TimedOut e) {
            throw Failures.tool(step, e.getMessage(), Map.of(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Failures.tool(step, "interrupted", Map.of(), e);
        }
    }
}
