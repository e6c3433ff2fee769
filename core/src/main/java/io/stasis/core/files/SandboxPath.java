package io.stasis.core.files;

import io.stasis.core.error.StasisException;
import java.util.ArrayList;
import java.util.List;

/**
 * A path as a caller names it inside a sandbox, checked for shape only. Where it really leads is
 * decided by the kernel at access time, confined to the sandbox root; this class only rejects
 * what cannot be a path at all and gives the normalised absolute form for messages.
 */
public record SandboxPath(String value) {
    public static final int MAX_LENGTH = 4096;

    public SandboxPath {
        if (value == null || value.isEmpty()) throw StasisException.invalid("path", "must not be empty");
        if (value.indexOf('\0') >= 0) throw StasisException.invalid("path", "must not contain NUL");
        if (value.length() > MAX_LENGTH) throw StasisException.invalid("path", "longer than " + MAX_LENGTH + " characters");
        if (!value.startsWith("/")) value = "/" + value;
    }

    /** The non-empty components, with {@code .} dropped; {@code ..} is kept for the kernel to clamp. */
    public List<String> components() {
        var out = new ArrayList<String>();
        for (String c : value.split("/")) if (!c.isEmpty() && !c.equals(".")) out.add(c);
        return out;
    }

    /** Whether the path names the root itself. */
    public boolean isRoot() {
        return components().isEmpty();
    }

    /** The path with {@code .}, {@code ..} and repeated slashes resolved lexically (for display). */
    public String normalized() {
        var out = new ArrayList<String>();
        for (String c : components()) {
            if (c.equals("..")) {
                if (!out.isEmpty()) out.removeLast();
            } else out.add(c);
        }
        return "/" + String.join("/", out);
    }

    @Override
    public String toString() {
        return value;
    }
}
