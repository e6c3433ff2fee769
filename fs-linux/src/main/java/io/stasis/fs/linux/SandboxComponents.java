package io.stasis.fs.linux;

import io.stasis.core.files.SandboxPath;
import java.util.ArrayList;
import java.util.List;

/** Sandbox paths as component lists ({@code .} and empty ones dropped, {@code ..} kept): what the confined lookups walk. */
final class SandboxComponents {
    private SandboxComponents() {
    }

    /** The components of a sandbox path, {@code .} and empty ones dropped, {@code ..} kept. */
    static List<String> of(String path) {
        return new SandboxPath(path).components();
    }

    /** The path for openat2 and messages: absolute, which RESOLVE_IN_ROOT takes from the root. */
    static String display(List<String> comps) {
        return "/" + String.join("/", comps);
    }

    static boolean isRootOrDotDot(List<String> comps) {
        return comps.isEmpty() || comps.getLast().equals("..");
    }

    static void refuseRootOrDotDot(List<String> comps, String action, String path) {
        if (comps.isEmpty())
            throw new LinuxException(Errno.EBUSY, action, path, "cannot " + action + " the root directory");
        if (comps.getLast().equals(".."))
            throw new LinuxException(Errno.EBUSY, action, path, "cannot " + action + " a path ending in '..'");
    }

    /** Where a symlink in {@code parentComps} leads, as a sandbox path (the kernel clamps it again). */
    static List<String> linkTarget(List<String> parentComps, String link) {
        var next = new ArrayList<String>();
        if (!link.startsWith("/")) next.addAll(parentComps);
        for (String c : link.split("/")) if (!c.isEmpty() && !c.equals(".")) next.add(c);
        return next;
    }
}
