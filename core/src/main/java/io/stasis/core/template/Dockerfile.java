package io.stasis.core.template;

import io.stasis.core.error.StasisException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * Reads a Dockerfile into a template build: the template it builds on ({@code FROM}), its {@link BuildStep}s and
 * its {@code CMD}. The syntax is Docker's, for the instructions that make sense for a sandbox template; the rest
 * (and whatever needs several stages or a registry) is refused with the line it starts on, so that a Dockerfile
 * never builds something other than what Docker would have built.
 */
public final class Dockerfile {
    public static final int MAX_BYTES = 1 << 20;

    private static final String FIELD = "dockerfile";
    private static final Set<String> SUPPORTED = Set.of("FROM", "RUN", "COPY", "ENV", "WORKDIR", "USER", "CMD");
    /** Instructions that describe an image to its users and change nothing a sandbox sees. */
    private static final Set<String> IGNORED = Set.of("LABEL", "EXPOSE", "MAINTAINER");
    private static final String SUPPORTED_LIST =
            "(supported: FROM, RUN, COPY, ENV, WORKDIR, USER, CMD; LABEL, EXPOSE and MAINTAINER are ignored)";
    private static final String IMPORT_HINT =
            "images from registries are imported with POST /v1/templates/import; FROM names a Stasis template such as base";

    /**
     * @param from  the template it builds on
     * @param steps what the build does, in order
     * @param cmd   the CMD, as argv (shell form becomes ["/bin/sh","-c",text])
     */
    public record Parsed(String from, List<BuildStep> steps, Optional<List<String>> cmd) {
        public Parsed {
            steps = List.copyOf(steps);
            cmd = cmd.map(List::copyOf);
        }
    }

    private Dockerfile() {
    }

    /** As {@link #parse(String, Function)} with nothing known of the base template's environment. */
    public static Parsed parse(String text) {
        return parse(text, from -> Map.of());
    }

    /**
     * @param baseEnv the environment the steps start with on a template ({@code $PATH} in
     *                {@code ENV PATH=/opt/bin:$PATH} is the base's)
     * @throws StasisException {@code invalid_request} on field {@code dockerfile}, naming the line, for anything it cannot build
     */
    public static Parsed parse(String text, Function<String, Map<String, String>> baseEnv) {
        if (text == null) throw StasisException.invalid(FIELD, "is missing");
        // A char is at least one UTF-8 byte: the cheap test first, so that a huge text is not encoded.
        if (text.length() > MAX_BYTES || text.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES)
            throw StasisException.invalid(FIELD, "is larger than " + MAX_BYTES + " bytes");
        var instructions = Lines.instructions(text);
        if (instructions.isEmpty()) throw StasisException.invalid(FIELD, "has no instructions: it needs FROM <template>, e.g. FROM base");
        var reader = new Reader(baseEnv);
        instructions.forEach(reader::read);
        return reader.parsed();
    }

    private static StasisException atLine(int line, String problem) {
        return StasisException.invalid(FIELD, "line " + line + ": " + problem);
    }

    /** What a user wrote, cut short enough to quote in a message (a line can be a megabyte). */
    private static String shorten(String text) {
        return text.length() <= 60 ? text : text.substring(0, 57) + "...";
    }

    private static String firstWord(String text) {
        int end = 0;
        while (end < text.length() && !Character.isWhitespace(text.charAt(end))) end++;
        return text.substring(0, end);
    }

    /** Resolves {@code .}, {@code ..} and repeated slashes in an absolute path; {@code ..} stops at the root, as in Linux. */
    private static String normalise(String absolutePath) {
        var parts = new ArrayDeque<String>();
        for (var part : absolutePath.split("/")) {
            if (part.isEmpty() || part.equals(".")) continue;
            if (part.equals("..")) parts.pollLast();
            else parts.addLast(part);
        }
        return "/" + String.join("/", parts);
    }

    /** An instruction, its continuation lines joined. */
    private record Instruction(int line, String keyword, String args) {
    }

    /**
     * A problem with the instruction being read; {@link Reader#read} adds its line. It never leaves this class
     * (callers only ever see {@link StasisException}), so it skips the stack trace.
     */
    private static final class Problem extends RuntimeException {
        Problem(String message) {
            super(message, null, false, false);
        }
    }

    /** Turns the text into instructions: parser directives, comments, empty lines and continuations, as Docker does. */
    private static final class Lines {
        static List<Instruction> instructions(String text) {
            var lines = text.split("\n", -1);
            for (int i = 0; i < lines.length; i++)
                if (lines[i].endsWith("\r")) lines[i] = lines[i].substring(0, lines[i].length() - 1);
            var instructions = new ArrayList<Instruction>();
            int next = skipDirectives(lines);
            while (next < lines.length) {
                int start = next;
                String line = lines[next++];
                if (isSkipped(line)) continue;
                var joined = new StringBuilder();
                String continued;
                while ((continued = withoutContinuation(line)) != null) {
                    joined.append(continued);
                    // Docker skips comments and empty lines inside an instruction too
                    while (next < lines.length && isSkipped(lines[next])) next++;
                    if (next == lines.length) {
                        line = "";
                        break;
                    }
                    line = lines[next++];
                }
                joined.append(line);
                String instruction = joined.toString().strip();
                if (instruction.isEmpty()) continue;
                String keyword = firstWord(instruction);
                instructions.add(new Instruction(start + 1, keyword.toUpperCase(Locale.ROOT), instruction.substring(keyword.length()).strip()));
            }
            return instructions;
        }

        /**
         * Directives ({@code # name=value}) are only read at the very top, before any other line. Only the escape
         * character matters: another one than {@code \} would change how every later line reads.
         */
        private static int skipDirectives(String[] lines) {
            int i = 0;
            for (; i < lines.length; i++) {
                String line = lines[i].strip();
                if (!line.startsWith("#")) break;
                String body = line.substring(1);
                int equals = body.indexOf('=');
                if (equals < 0) break;
                String name = body.substring(0, equals).strip();
                String value = body.substring(equals + 1).strip();
                if (!name.matches("[A-Za-z][A-Za-z0-9]*") || value.isEmpty()) break;
                if (name.equalsIgnoreCase("escape") && !value.equals("\\"))
                    throw atLine(i + 1, "the escape directive '" + shorten(value) + "' is not supported: only \\ escapes");
            }
            return i;
        }

        private static boolean isSkipped(String line) {
            String stripped = line.strip();
            return stripped.isEmpty() || stripped.startsWith("#");
        }

        /** The line without its trailing backslash (spaces after it allowed, as Docker allows), or null if it does not continue. */
        private static String withoutContinuation(String line) {
            int end = line.length();
            while (end > 0 && (line.charAt(end - 1) == ' ' || line.charAt(end - 1) == '\t')) end--;
            return end > 0 && line.charAt(end - 1) == '\\' ? line.substring(0, end - 1) : null;
        }
    }

    /** Reads the instructions in order, keeping what the later ones depend on: the ENV values and the WORKDIR. */
    private static final class Reader {
        private String from;
        private final List<BuildStep> steps = new ArrayList<>();
        private Optional<List<String>> cmd = Optional.empty();
        private final Map<String, String> env = new HashMap<>();
        private String workdir = "/";
        private final Function<String, Map<String, String>> baseEnv;

        Reader(Function<String, Map<String, String>> baseEnv) {
            this.baseEnv = baseEnv;
        }

        void read(Instruction instruction) {
            try {
                read(instruction.keyword(), instruction.args());
            } catch (Problem | StasisException e) {
                throw atLine(instruction.line(), e.getMessage());
            }
        }

        Parsed parsed() {
            return new Parsed(from, steps, cmd);
        }

        private void read(String keyword, String args) {
            if (!SUPPORTED.contains(keyword) && !IGNORED.contains(keyword))
                throw new Problem(shorten(keyword) + " is not supported " + SUPPORTED_LIST);
            if (args.isEmpty()) throw new Problem(keyword + " needs arguments");
            if (from == null && !keyword.equals("FROM"))
                throw new Problem("the first instruction must be FROM <template> (e.g. FROM base), not " + keyword);
            switch (keyword) {
                case "FROM" -> from(args);
                case "RUN" -> run(args);
                case "COPY" -> copy(args);
                case "ENV" -> env(args);
                case "WORKDIR" -> workdir(args);
                case "USER" -> steps.add(new BuildStep.User(expand(args)));
                case "CMD" -> cmd(args);
                default -> { } // ignored
            }
        }

        private void from(String args) {
            if (from != null)
                throw new Problem("a second FROM is not supported: multi-stage builds are not; one FROM names the template to build on");
            rejectFlag("FROM", args, "a template runs on the host's platform");
            var words = args.split("\\s+");
            if (words.length > 1 && words[1].equalsIgnoreCase("AS"))
                throw new Problem("FROM ... AS is not supported: multi-stage builds are not; write FROM <template>");
            if (words.length > 1) throw new Problem("FROM takes one template name, e.g. FROM base");
            String name = words[0];
            if (name.contains("/") || name.contains(":") || name.contains("@"))
                throw new Problem("'" + shorten(name) + "' is an image reference: " + IMPORT_HINT);
            if (!TemplateBuildRequest.NAME.matcher(name).matches())
                throw new Problem("'" + shorten(name) + "' is not a template name (" + TemplateBuildRequest.NAME.pattern() + ")");
            from = name;
            env.putAll(baseEnv.apply(name));
        }

        /** RUN: the shell does its own substitution, so the text goes to it untouched. */
        private void run(String args) {
            rejectFlag("RUN", args, "RUN takes a command only");
            var argv = JsonStrings.parse(args);
            if (argv.isPresent() && argv.get().isEmpty()) throw new Problem("RUN [] has no command");
            steps.add(new BuildStep.Run(argv.map(Dockerfile::shellQuoted).orElse(args)));
        }

        private void cmd(String args) {
            var argv = JsonStrings.parse(args).orElse(List.of("/bin/sh", "-c", args));
            if (argv.isEmpty()) throw new Problem("CMD [] has no command");
            if (argv.stream().anyMatch(arg -> arg.indexOf('\0') >= 0)) throw new Problem("CMD must not contain NUL");
            cmd = Optional.of(argv);
        }

        private void env(String args) {
            var words = ShellWords.split(args);
            var vars = new LinkedHashMap<String, String>();
            if (!words.getFirst().contains("=")) {
                // The legacy form, ENV NAME value with spaces: one variable, the rest of the line its value.
                String name = firstWord(args);
                String value = args.substring(name.length()).strip();
                if (value.isEmpty()) throw new Problem("ENV " + shorten(name) + " has no value: write ENV NAME=value");
                vars.put(expand(name), expand(value));
            } else {
                for (var word : words) {
                    int equals = word.indexOf('=');
                    if (equals < 0) throw new Problem("ENV: '" + shorten(word) + "' is not NAME=value");
                    vars.put(expand(word.substring(0, equals)), expand(word.substring(equals + 1)));
                }
            }
            steps.add(new BuildStep.Env(vars));
            // Only now: the pairs of one ENV do not see one another, as in Docker.
            env.putAll(vars);
        }

        private void workdir(String args) {
            String path = expand(args);
            if (path.isEmpty()) throw new Problem("WORKDIR is empty");
            workdir = normalise(path.startsWith("/") ? path : workdir + "/" + path);
            steps.add(new BuildStep.Workdir(workdir));
        }

        private void copy(String args) {
            if (firstWord(args).equals("--from") || firstWord(args).startsWith("--from="))
                throw new Problem("COPY --from is not supported: multi-stage builds are not; COPY copies from the build context");
            rejectFlag("COPY", args, "COPY takes sources and a destination only");
            var json = JsonStrings.parse(args);
            // JSON strings are already unquoted: only $ and \ stay special in them.
            var words = json.isPresent()
                    ? json.get().stream().map(word -> new Expansion(word, env, true).all()).toList()
                    : ShellWords.split(args).stream().map(this::expand).toList();
            if (words.size() < 2) throw new Problem("COPY needs a source and a destination: COPY src... dest");
            var sources = words.subList(0, words.size() - 1);
            String dest = destination(words.getLast());
            if (sources.size() > 1 && !dest.endsWith("/"))
                throw new Problem("COPY with several sources needs a destination directory ending in /, not '" + shorten(words.getLast()) + "'");
            for (var source : sources) steps.add(new BuildStep.Copy(contextPath(source), dest));
        }

        /** A source as a path inside the context: {@code .} is all of it. */
        private static String contextPath(String source) {
            if (source.isEmpty()) throw new Problem("a COPY source is empty");
            if (source.startsWith("/")) throw new Problem("COPY source '" + shorten(source) + "' must be relative to the build context");
            if (source.chars().anyMatch(c -> c == '*' || c == '?' || c == '['))
                throw new Problem("COPY source '" + shorten(source) + "': wildcards (*, ? and [) are not supported yet");
            var parts = new ArrayList<String>();
            for (var part : source.split("/")) {
                if (part.equals(".."))
                    throw new Problem("COPY source '" + shorten(source) + "' must stay inside the build context (no '..')");
                if (!part.isEmpty() && !part.equals(".")) parts.add(part);
            }
            return parts.isEmpty() ? "." : String.join("/", parts);
        }

        /**
         * The destination as an absolute path; one ending in {@code /} (or naming a directory: {@code .}, {@code ..})
         * keeps a trailing slash, which tells a file to go into it rather than become it.
         */
        private String destination(String dest) {
            if (dest.isEmpty()) throw new Problem("the COPY destination is empty");
            boolean directory = dest.endsWith("/") || dest.equals(".") || dest.equals("..") || dest.endsWith("/.") || dest.endsWith("/..");
            String path = normalise(dest.startsWith("/") ? dest : workdir + "/" + dest);
            return directory && !path.equals("/") ? path + "/" : path;
        }

        /** Docker's flags ({@code --mount=...}) come first; none of them has a meaning here. */
        private static void rejectFlag(String keyword, String args, String why) {
            if (!args.startsWith("--")) return;
            String flag = firstWord(args).split("=", 2)[0];
            throw new Problem(keyword + " " + shorten(flag) + " is not supported: " + why);
        }

        private String expand(String word) {
            return new Expansion(word, env, false).all();
        }
    }

    /** Each argument in single quotes, so that {@code /bin/sh} passes it on as it is: the exec form without a shell's rules. */
    private static String shellQuoted(List<String> argv) {
        var command = new StringBuilder();
        for (var arg : argv) {
            if (!command.isEmpty()) command.append(' ');
            command.append('\'').append(arg.replace("'", "'\\''")).append('\'');
        }
        return command.toString();
    }

    /**
     * Splits arguments at unquoted whitespace as Docker does before substitution: quotes and backslashes stay in the
     * words (an {@link Expansion} removes them), so {@code K="a b"} is one word.
     */
    private static final class ShellWords {
        static List<String> split(String text) {
            var words = new ArrayList<String>();
            var word = new StringBuilder();
            boolean inWord = false;
            char quote = 0;
            for (int i = 0; i < text.length(); i++) {
                char c = text.charAt(i);
                if (quote != 0) {
                    word.append(c);
                    if (c == quote) quote = 0;
                    else if (c == '\\' && quote == '"' && i + 1 < text.length()) word.append(text.charAt(++i));
                } else if (Character.isWhitespace(c)) {
                    if (inWord) words.add(word.toString());
                    word.setLength(0);
                    inWord = false;
                } else {
                    inWord = true;
                    word.append(c);
                    if (c == '\'' || c == '"') quote = c;
                    else if (c == '\\' && i + 1 < text.length()) word.append(text.charAt(++i));
                }
            }
            if (inWord) words.add(word.toString());
            return words;
        }
    }

    /**
     * One word as Docker's shell lexer reads it: quotes removed, backslash escapes, and {@code $VAR}, {@code ${VAR}},
     * {@code ${VAR:-default}} and {@code ${VAR:+alternative}} from the ENV values so far (unset is empty).
     */
    private static final class Expansion {
        /** ${A:-${B:-...}} recurses; a bound keeps a hostile text from overflowing the stack. */
        private static final int MAX_NESTING = 32;

        private final String text;
        private final Map<String, String> env;
        /** For the JSON form, whose strings are already unquoted: quotes are then plain characters. */
        private final boolean quotesAreLiteral;
        private int pos;
        private int nesting;

        Expansion(String text, Map<String, String> env, boolean quotesAreLiteral) {
            this.text = text;
            this.env = env;
            this.quotesAreLiteral = quotesAreLiteral;
        }

        String all() {
            return until(false);
        }

        /** Reads to the end, or to the unquoted {@code }} that closes a ${VAR:-word}. */
        private String until(boolean toClosingBrace) {
            var out = new StringBuilder();
            while (pos < text.length()) {
                char c = text.charAt(pos++);
                if (c == '}' && toClosingBrace) return out.toString();
                if (c == '\\') {
                    if (pos < text.length()) out.append(text.charAt(pos++));
                } else if (c == '$') {
                    out.append(dollar());
                } else if (c == '\'' && !quotesAreLiteral) {
                    int end = text.indexOf('\'', pos);
                    if (end < 0) throw new Problem("unterminated single quote in '" + shorten(text) + "'");
                    out.append(text, pos, end);
                    pos = end + 1;
                } else if (c == '"' && !quotesAreLiteral) {
                    out.append(doubleQuoted());
                } else {
                    out.append(c);
                }
            }
            if (toClosingBrace) throw new Problem("missing } in '" + shorten(text) + "'");
            return out.toString();
        }

        /** Inside double quotes a backslash only escapes what the shell lets it: $ ` " \. */
        private String doubleQuoted() {
            var out = new StringBuilder();
            while (pos < text.length()) {
                char c = text.charAt(pos++);
                if (c == '"') return out.toString();
                if (c == '$') {
                    out.append(dollar());
                } else if (c == '\\' && pos < text.length() && "$`\"\\".indexOf(text.charAt(pos)) >= 0) {
                    out.append(text.charAt(pos++));
                } else {
                    out.append(c);
                }
            }
            throw new Problem("unterminated double quote in '" + shorten(text) + "'");
        }

        /** After a {@code $}: a variable, or a plain {@code $} when no name follows. */
        private String dollar() {
            if (pos < text.length() && text.charAt(pos) == '{') {
                pos++;
                return braced();
            }
            String name = name();
            return name.isEmpty() ? "$" : env.getOrDefault(name, "");
        }

        private String braced() {
            if (++nesting > MAX_NESTING) throw new Problem("variables nested more than " + MAX_NESTING + " deep");
            String name = name();
            if (name.isEmpty() || pos >= text.length()) throw new Problem("bad substitution in '" + shorten(text) + "'");
            String value = env.get(name);
            boolean set = value != null && !value.isEmpty();
            char after = text.charAt(pos++);
            String result;
            if (after == '}') {
                result = value == null ? "" : value;
            } else if (after == ':' && pos < text.length() && (text.charAt(pos) == '-' || text.charAt(pos) == '+')) {
                boolean isDefault = text.charAt(pos++) == '-';
                String word = until(true);
                result = isDefault ? (set ? value : word) : (set ? word : "");
            } else {
                throw new Problem("${" + shorten(name) + after + "...} is not supported: only ${VAR}, ${VAR:-default} and ${VAR:+alternative}");
            }
            nesting--;
            return result;
        }

        private String name() {
            int start = pos;
            if (pos < text.length() && isNameChar(text.charAt(pos)) && !Character.isDigit(text.charAt(pos))) {
                pos++;
                while (pos < text.length() && isNameChar(text.charAt(pos))) pos++;
            }
            return text.substring(start, pos);
        }

        private static boolean isNameChar(char c) {
            return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
        }
    }

    /** A JSON array of strings (the exec form), read without a JSON library; anything else is Docker's shell form. */
    private static final class JsonStrings {
        private final String text;
        private int pos;

        private JsonStrings(String text) {
            this.text = text;
        }

        static Optional<List<String>> parse(String text) {
            return Optional.ofNullable(new JsonStrings(text).array());
        }

        /** The strings, or null when the text is not exactly one array of strings. */
        private List<String> array() {
            skipSpace();
            if (!take('[')) return null;
            var strings = new ArrayList<String>();
            skipSpace();
            if (!take(']')) {
                do {
                    skipSpace();
                    String string = string();
                    if (string == null) return null;
                    strings.add(string);
                    skipSpace();
                } while (take(','));
                if (!take(']')) return null;
            }
            skipSpace();
            return pos == text.length() ? strings : null;
        }

        private String string() {
            if (!take('"')) return null;
            var out = new StringBuilder();
            while (pos < text.length()) {
                char c = text.charAt(pos++);
                if (c == '"') return out.toString();
                if (c < 0x20) return null;
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                if (pos >= text.length()) return null;
                char escaped = text.charAt(pos++);
                switch (escaped) {
                    case '"', '\\', '/' -> out.append(escaped);
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'n' -> out.append('\n');
                    case 'r' -> out.append('\r');
                    case 't' -> out.append('\t');
                    case 'u' -> {
                        if (pos + 4 > text.length()) return null;
                        int code = 0;
                        for (int i = 0; i < 4; i++) {
                            int digit = Character.digit(text.charAt(pos++), 16);
                            // Character.digit also takes other scripts' digits; JSON takes ASCII only
                            if (digit < 0 || text.charAt(pos - 1) > 'f') return null;
                            code = code * 16 + digit;
                        }
                        out.append((char) code);
                    }
                    default -> {
                        return null;
                    }
                }
            }
            return null;
        }

        private boolean take(char c) {
            if (pos < text.length() && text.charAt(pos) == c) {
                pos++;
                return true;
            }
            return false;
        }

        private void skipSpace() {
            while (pos < text.length() && " \t\n\r".indexOf(text.charAt(pos)) >= 0) pos++;
        }
    }
}
