package io.stasis.templates.oci;

import java.util.ArrayList;
import java.util.List;

/**
 * Where a layer member goes in the root: its name as components, {@code .} and empty ones
 * dropped and {@code ..} resolved lexically. An absolute name, or one whose {@code ..} climbs
 * above the root, is refused: a layer names paths relative to the root it is applied to.
 */
record EntryPath(List<String> components) {
    EntryPath {
        components = List.copyOf(components);
    }

    static final EntryPath ROOT = new EntryPath(List.of());

    /** @param subject how the refusal names the member */
    static EntryPath of(String raw, String subject) {
        return of(raw, subject, "");
    }

    /** @param what what {@code raw} is, when not the member's own name (e.g. {@code "its link target: "}) */
    static EntryPath of(String raw, String subject, String what) {
        if (raw.startsWith("/")) throw ImageException.refused(subject, what + "an absolute path: a layer names paths relative to the root");
        var out = new ArrayList<String>();
        for (String c : raw.split("/")) {
            if (c.isEmpty() || c.equals(".")) continue;
            if (c.equals("..")) {
                if (out.isEmpty()) throw ImageException.refused(subject, what + "'..' climbs out of the root");
                out.removeLast();
            } else out.add(c);
        }
        return new EntryPath(out);
    }

    boolean isRoot() {
        return components.isEmpty();
    }

    /** The last component; empty for the root. */
    String name() {
        return isRoot() ? "" : components.getLast();
    }

    EntryPath parent() {
        return isRoot() ? this : new EntryPath(components.subList(0, components.size() - 1));
    }

    EntryPath child(String name) {
        var c = new ArrayList<>(components);
        c.add(name);
        return new EntryPath(c);
    }

    /** The path as {@code ConfinedRoot} takes it: absolute from the root. */
    @Override
    public String toString() {
        return "/" + String.join("/", components);
    }
}
