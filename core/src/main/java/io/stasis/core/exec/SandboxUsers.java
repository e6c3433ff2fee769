package io.stasis.core.exec;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.files.SandboxPath;
import io.stasis.core.lifecycle.SandboxService;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.spi.ProcessUser;
import io.stasis.core.spi.SandboxFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Who a process of a sandbox runs as, from the sandbox's own {@code /etc/passwd} and
 * {@code /etc/group} (read confined to its root, never the host's): a user name or a numeric uid,
 * optionally {@code :group}. A name is the sandbox's to define; a uid needs no entry.
 */
public final class SandboxUsers {
    /** {@code name}, {@code uid}, {@code name:group} or {@code uid:gid}. */
    public static final Pattern SPEC = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,31})?");
    private static final long MAX_FILE = 4L << 20;

    private final SandboxFiles files;

    public SandboxUsers(SandboxFiles files) {
        this.files = files;
    }

    /**
     * A user as found: its ids and home ({@code /} for a uid without an entry).
     *
     * @param name the user's name, or its uid without an entry
     */
    public record Resolved(String name, ProcessUser ids, String home) {
        public boolean isRoot() {
            return ids.uid() == 0;
        }
    }

    /** Who a command runs as, and where: the call's choice, else its template's (see {@link SandboxService#execDefaults}). */
    public record RunAs(Optional<Resolved> user, Optional<String> cwd) {
        public Optional<ProcessUser> ids() {
            return user.map(Resolved::ids);
        }
    }

    /** The user and working directory of a command in {@code sandbox}; the cwd defaults to the user's home last. */
    public RunAs runAs(SandboxService sandboxes, Sandbox sandbox, Optional<String> user, Optional<String> cwd) {
        var defaults = sandboxes.execDefaults(sandbox);
        var resolved = user.or(defaults::user).map(u -> resolve(sandboxes.rootOf(sandbox), u, "user"));
        return new RunAs(resolved, cwd.or(defaults::cwd).or(() -> resolved.map(Resolved::home)));
    }

    /** {@code invalid_request} on {@code field} if the sandbox has no such user or group. */
    public Resolved resolve(Path root, String spec, String field) {
        if (spec == null || !SPEC.matcher(spec).matches())
            throw StasisException.invalid(field, "must be a user name or uid, optionally :group, was '" + spec + "'");
        String[] parts = spec.split(":", 2);
        var passwd = entries(root, "/etc/passwd");
        var entry = passwd.stream().filter(e -> e.get(0).equals(parts[0])).findFirst()
                .or(() -> isNumber(parts[0]) ? passwd.stream().filter(e -> e.size() > 2 && e.get(2).equals(parts[0])).findFirst()
                        : Optional.empty());
        if (entry.isEmpty() && !isNumber(parts[0]))
            throw StasisException.invalid(field, "no user '" + parts[0] + "' in the sandbox's /etc/passwd");
        int uid = entry.map(e -> id(e, 2, field)).orElseGet(() -> Integer.parseInt(parts[0]));
        int gid = entry.map(e -> id(e, 3, field)).orElse(uid);
        String name = entry.map(e -> e.get(0)).orElse(parts[0]);
        String home = entry.filter(e -> e.size() > 5 && e.get(5).startsWith("/")).map(e -> e.get(5)).orElse("/");
        var groupFile = entries(root, "/etc/group");
        if (parts.length == 2) gid = group(groupFile, parts[1], field);
        var supplementary = new ArrayList<Integer>();
        for (var g : groupFile)
            if (g.size() > 3 && List.of(g.get(3).split(",")).contains(name) && isNumber(g.get(2))) {
                int extra = Integer.parseInt(g.get(2));
                if (extra != gid && extra <= ProcessUser.MAX_ID && supplementary.size() < ProcessUser.MAX_GROUPS) supplementary.add(extra);
            }
        if (uid > ProcessUser.MAX_ID || gid > ProcessUser.MAX_ID)
            throw StasisException.invalid(field, "'" + spec + "' has ids above " + ProcessUser.MAX_ID + ", which a sandbox does not map");
        return new Resolved(name, new ProcessUser(uid, gid, supplementary), home);
    }

    private static int group(List<List<String>> groups, String spec, String field) {
        var entry = groups.stream().filter(g -> g.get(0).equals(spec)).findFirst();
        if (entry.isPresent()) return id(entry.get(), 2, field);
        if (isNumber(spec)) return Integer.parseInt(spec);
        throw StasisException.invalid(field, "no group '" + spec + "' in the sandbox's /etc/group");
    }

    private static int id(List<String> entry, int index, String field) {
        if (entry.size() <= index || !isNumber(entry.get(index)))
            throw StasisException.invalid(field, "the sandbox's entry for '" + entry.get(0) + "' has no valid id");
        return Integer.parseInt(entry.get(index));
    }

    private static boolean isNumber(String s) {
        return !s.isEmpty() && s.length() <= 9 && s.chars().allMatch(Character::isDigit);
    }

    /** The colon-separated lines of a file of the sandbox; none if it has no such file. */
    private List<List<String>> entries(Path root, String path) {
        try (var content = files.read(root, new SandboxPath(path))) {
            if (content.size() > MAX_FILE) throw StasisException.invalid("user", path + " in the sandbox is larger than 4 MiB");
            var out = new ArrayList<List<String>>();
            for (String line : new String(content.stream().readAllBytes(), StandardCharsets.UTF_8).split("\n"))
                if (!line.isBlank() && !line.startsWith("#")) out.add(List.of(line.split(":", -1)));
            return out;
        } catch (StasisException e) {
            if (e.code() == ErrorCode.FILE_NOT_FOUND) return List.of();
            throw e;
        } catch (IOException e) {
            throw new StasisException(ErrorCode.RUNTIME_FAILED, "reading " + path + " in the sandbox: " + e.getMessage(), Map.of("path", path), e);
        }
    }
}
