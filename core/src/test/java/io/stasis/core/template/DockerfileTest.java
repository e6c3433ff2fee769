package io.stasis.core.template;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DockerfileTest {

    private static List<BuildStep> steps(String dockerfile) {
        return Dockerfile.parse(dockerfile).steps();
    }

    /** The steps after {@code FROM base}. */
    private static List<BuildStep> after(String... lines) {
        return steps("FROM base\n" + String.join("\n", lines));
    }

    private static BuildStep only(String... lines) {
        var steps = after(lines);
        assertThat(steps).hasSize(1);
        return steps.getFirst();
    }

    /** Asserts the text is refused as an invalid Dockerfile with a message containing each fragment. */
    private static void refused(String dockerfile, String... fragments) {
        var thrown = catchThrowable(() -> Dockerfile.parse(dockerfile));
        assertThat(thrown).isInstanceOf(StasisException.class);
        var e = (StasisException) thrown;
        assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
        assertThat(e.details()).containsEntry("field", "dockerfile");
        assertThat(e.getMessage()).contains(fragments);
    }

    @Test
    void aRealisticDockerfile() {
        var parsed = Dockerfile.parse("""
                # syntax=docker/dockerfile:1
                # A small Python service.
                FROM base
                LABEL org.opencontainers.image.source="https://example.com/app"
                ENV APP_HOME=/srv/app \\
                    PORT=8080
                WORKDIR $APP_HOME
                RUN apt-get update && \\
                    # the list is long; Docker drops this comment
                    apt-get install -y git

                COPY requirements.txt ./
                RUN ["pip", "install", "-r", "requirements.txt"]
                COPY . .
                USER app
                EXPOSE ${PORT}
                CMD ["python", "-m", "app", "--port", "8080"]
                """);
        assertThat(parsed.from()).isEqualTo("base");
        assertThat(parsed.steps()).containsExactly(
                new BuildStep.Env(Map.of("APP_HOME", "/srv/app", "PORT", "8080")),
                new BuildStep.Workdir("/srv/app"),
                new BuildStep.Run("apt-get update &&     apt-get install -y git"),
                new BuildStep.Copy("requirements.txt", "/srv/app/"),
                new BuildStep.Run("'pip' 'install' '-r' 'requirements.txt'"),
                new BuildStep.Copy(".", "/srv/app/"),
                new BuildStep.User("app"));
        assertThat(parsed.cmd()).contains(List.of("python", "-m", "app", "--port", "8080"));
    }

    @Test
    void onlyFromIsEnough() {
        var parsed = Dockerfile.parse("FROM base");
        assertThat(parsed.from()).isEqualTo("base");
        assertThat(parsed.steps()).isEmpty();
        assertThat(parsed.cmd()).isEmpty();
    }

    // Lines

    @Test
    void commentsEmptyLinesAndCrlfAreSkippedAndKeywordsAnyCase() {
        var parsed = Dockerfile.parse("\r\n  # comment\r\nfrom base\r\n\r\n\t# indented comment\r\nrun echo hi\r\nRuN echo two \r\n");
        assertThat(parsed.steps()).containsExactly(new BuildStep.Run("echo hi"), new BuildStep.Run("echo two"));
    }

    @Test
    void aBackslashContinuesTheLineEvenWithSpacesAfterIt() {
        assertThat(only("RUN echo a \\  ", "  && echo b \\\t", "", "  && echo c"))
                .isEqualTo(new BuildStep.Run("echo a   && echo b   && echo c"));
    }

    @Test
    void commentsInsideAContinuedInstructionAreDropped() {
        assertThat(only("RUN echo a \\", "# not part of it \\", "   # nor this", "&& echo b"))
                .isEqualTo(new BuildStep.Run("echo a && echo b"));
    }

    @Test
    void aContinuationAtTheEndOfTheFileEndsTheInstruction() {
        assertThat(only("RUN echo a \\")).isEqualTo(new BuildStep.Run("echo a"));
    }

    @Test
    void errorsNameTheLineTheInstructionStartsOn() {
        refused("# comment\n\nFROM base\nRUN echo \\\n  a\n\nCOPY \\\n  --chown=1 a b", "line 7: COPY --chown is not supported");
    }

    // Parser directives

    @Test
    void theEscapeDirectiveOtherThanBackslashIsRefused() {
        refused("# syntax=docker/dockerfile:1\n# escape=`\nFROM base", "line 2: the escape directive '`' is not supported");
        refused("#ESCAPE = `\nFROM base", "line 1", "escape directive");
    }

    @Test
    void otherDirectivesAndTheBackslashEscapeAreAccepted() {
        assertThat(Dockerfile.parse("# escape=\\\n# syntax=docker/dockerfile:1.7\n# check=skip=all\nFROM base").from()).isEqualTo("base");
    }

    @Test
    void directivesAreOnlyReadAtTheTop() {
        assertThat(Dockerfile.parse("FROM base\n# escape=`\nRUN echo a").steps()).containsExactly(new BuildStep.Run("echo a"));
        assertThat(Dockerfile.parse("# a comment\n# escape=`\nFROM base").from()).isEqualTo("base");
    }

    // Instructions

    @ParameterizedTest
    @ValueSource(strings = {"ADD", "ARG", "ENTRYPOINT", "VOLUME", "HEALTHCHECK", "ONBUILD", "SHELL", "STOPSIGNAL", "FROBNICATE"})
    void otherInstructionsAreRefusedWithTheSupportedList(String keyword) {
        refused("FROM base\n" + keyword + " something",
                "line 2: " + keyword + " is not supported (supported: FROM, RUN, COPY, ENV, WORKDIR, USER, CMD; "
                        + "LABEL, EXPOSE and MAINTAINER are ignored)");
    }

    @Test
    void anUnsupportedInstructionIsNamedEvenInLowerCase() {
        refused("FROM base\nadd a b", "line 2: ADD is not supported");
    }

    @Test
    void labelExposeAndMaintainerChangeNothing() {
        assertThat(after("LABEL a=b c=\"d e\"", "EXPOSE 80/tcp 443", "MAINTAINER someone <a@example.com>")).isEmpty();
    }

    @Test
    void anInstructionWithoutArgumentsIsRefused() {
        refused("FROM base\nRUN", "line 2: RUN needs arguments");
        refused("FROM base\n\nWORKDIR   ", "line 3: WORKDIR needs arguments");
        refused("FROM base\nLABEL", "line 2: LABEL needs arguments");
        refused("FROM", "line 1: FROM needs arguments");
    }

    @Test
    void anEmptyOrHugeOrMissingTextIsRefused() {
        refused("", "has no instructions");
        refused("# only a comment\n\n   \n", "has no instructions");
        refused(null, "missing");
        refused("FROM base\n" + "#".repeat(Dockerfile.MAX_BYTES), "larger than " + Dockerfile.MAX_BYTES + " bytes");
        // counted in UTF-8 bytes, not chars
        refused("FROM base\n#" + "é".repeat(Dockerfile.MAX_BYTES / 2), "larger than");
    }

    // FROM

    @Test
    void fromMustComeFirst() {
        refused("RUN echo hi\nFROM base", "line 1: the first instruction must be FROM <template>");
        refused("# comment\nLABEL a=b\nFROM base", "line 2", "FROM");
    }

    @Test
    void multiStageBuildsAreRefused() {
        refused("FROM base AS build", "line 1: FROM ... AS is not supported");
        refused("FROM base\nRUN make\nFROM base", "line 3: a second FROM is not supported");
        refused("FROM --platform=linux/arm64 base", "line 1: FROM --platform is not supported");
        refused("FROM base extra", "line 1: FROM takes one template name");
    }

    @ParameterizedTest
    @ValueSource(strings = {"ubuntu:24.04", "docker.io/library/ubuntu", "python@sha256:0123abcd", "ghcr.io/org/img:1"})
    void imageReferencesPointToTheImport(String image) {
        refused("FROM " + image, "line 1: '" + image + "' is an image reference: images from registries are imported with "
                + "POST /v1/templates/import; FROM names a Stasis template such as base");
    }

    @Test
    void fromNamesATemplate() {
        assertThat(Dockerfile.parse("FROM python-3.12_slim.v2").from()).isEqualTo("python-3.12_slim.v2");
        refused("FROM Base", "line 1: 'Base' is not a template name");
        refused("FROM $BASE", "not a template name");
    }

    // RUN

    @Test
    void runShellFormIsTheTextAsWritten() {
        assertThat(only("RUN echo \"$HOME\" ${X:-y} 'a  b' \\$")).isEqualTo(new BuildStep.Run("echo \"$HOME\" ${X:-y} 'a  b' \\$"));
    }

    @Test
    void runExecFormIsQuotedForTheShell() {
        assertThat(only("RUN [\"apt-get\", \"install\",\"-y\" , \"git\"]")).isEqualTo(new BuildStep.Run("'apt-get' 'install' '-y' 'git'"));
        assertThat(only("RUN [\"echo\", \"it's $HOME\", \"\"]")).isEqualTo(new BuildStep.Run("'echo' 'it'\\''s $HOME' ''"));
    }

    @Test
    void runExecFormReadsJsonEscapes() {
        assertThat(only("RUN [\"printf\", \"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u0041\"]"))
                .isEqualTo(new BuildStep.Run("'printf' '\"\\/\b\f\n\r\téA'"));
    }

    @Test
    void anythingButAJsonArrayOfStringsIsShellForm() {
        assertThat(only("RUN [ -f /etc/passwd ] && echo yes")).isEqualTo(new BuildStep.Run("[ -f /etc/passwd ] && echo yes"));
        assertThat(only("RUN [\"a\", 1]")).isEqualTo(new BuildStep.Run("[\"a\", 1]"));
        assertThat(only("RUN [\"a\\x\"]")).isEqualTo(new BuildStep.Run("[\"a\\x\"]"));
        assertThat(only("RUN [\"a\"] && b")).isEqualTo(new BuildStep.Run("[\"a\"] && b"));
    }

    @Test
    void runFlagsAreRefusedByName() {
        refused("FROM base\nRUN --mount=type=cache,target=/root/.cache pip install x", "line 2: RUN --mount is not supported");
        refused("FROM base\nRUN --network=none true", "line 2: RUN --network is not supported");
        refused("FROM base\nRUN []", "line 2: RUN [] has no command");
    }

    @Test
    void aRunStepsOwnCheckNamesTheLine() {
        refused("FROM base\nRUN [\"a\\u0000b\"]", "line 2:", "NUL");
    }

    // ENV

    @Test
    void envTakesSeveralPairsWithQuotesAndEscapes() {
        var env = (BuildStep.Env) only("ENV K=V K2=\"v 2\" K3=v\\ 3 K4='v $4' K5=\"a\\\"b\\$c\" K6=");
        assertThat(env.vars()).containsExactlyInAnyOrderEntriesOf(
                Map.of("K", "V", "K2", "v 2", "K3", "v 3", "K4", "v $4", "K5", "a\"b$c", "K6", ""));
    }

    @Test
    void envLegacyFormTakesTheRestOfTheLine() {
        assertThat(only("ENV GREETING hello   big \"world\"")).isEqualTo(new BuildStep.Env(Map.of("GREETING", "hello   big world")));
    }

    @Test
    void envErrorsNameTheLine() {
        refused("FROM base\nENV ALONE", "line 2: ENV ALONE has no value");
        refused("FROM base\nENV A=1 B", "line 2: ENV: 'B' is not NAME=value");
        refused("FROM base\nENV 1A=x", "line 2:", "not a valid variable name");
        refused("FROM base\nENV A=\"open", "line 2: unterminated double quote");
        refused("FROM base\nENV A='open", "line 2: unterminated single quote");
    }

    @Test
    void envSeesEarlierInstructionsButNotItsOwnPairs() {
        var steps = after("ENV A=1", "ENV A=2 B=$A C=${B}x", "ENV D=$A$B$C");
        assertThat(steps.get(1)).isEqualTo(new BuildStep.Env(Map.of("A", "2", "B", "1", "C", "x")));
        assertThat(steps.get(2)).isEqualTo(new BuildStep.Env(Map.of("D", "21x")));
    }

    // Variable substitution

    @Test
    void substitutionFormsAsInDocker() {
        var steps = after("ENV SET=yes EMPTY=",
                "ENV A=$SET B=${SET} C=${UNSET} D=${UNSET:-dflt} E=${EMPTY:-dflt} F=${SET:-dflt} G=${SET:+alt} H=${UNSET:+alt}"
                        + " I=\\$SET J=$ K=${UNSET:-${SET}-nested} L=\"${UNSET:-a b}\" M=$SET.txt N=$1");
        assertThat(((BuildStep.Env) steps.get(1)).vars()).containsExactlyInAnyOrderEntriesOf(Map.ofEntries(
                Map.entry("A", "yes"), Map.entry("B", "yes"), Map.entry("C", ""), Map.entry("D", "dflt"), Map.entry("E", "dflt"),
                Map.entry("F", "yes"), Map.entry("G", "alt"), Map.entry("H", ""), Map.entry("I", "$SET"), Map.entry("J", "$"),
                Map.entry("K", "yes-nested"), Map.entry("L", "a b"), Map.entry("M", "yes.txt"), Map.entry("N", "$1")));
    }

    @Test
    void substitutionAppliesToWorkdirCopyAndUserButNotRunOrCmd() {
        var parsed = Dockerfile.parse(String.join("\n", "FROM base", "ENV DIR=/opt/app WHO=worker SRC=src",
                "WORKDIR $DIR", "COPY $SRC/ ${DIR}/lib/", "USER ${WHO}:${WHO}", "RUN echo $DIR", "CMD echo $DIR"));
        assertThat(parsed.steps()).containsExactly(new BuildStep.Env(Map.of("DIR", "/opt/app", "WHO", "worker", "SRC", "src")),
                new BuildStep.Workdir("/opt/app"), new BuildStep.Copy("src", "/opt/app/lib/"), new BuildStep.User("worker:worker"),
                new BuildStep.Run("echo $DIR"));
        assertThat(parsed.cmd()).contains(List.of("/bin/sh", "-c", "echo $DIR"));
    }

    @Test
    void unsupportedOrBrokenSubstitutionsAreRefused() {
        refused("FROM base\nWORKDIR ${A?required}", "line 2: ${A?...} is not supported");
        refused("FROM base\nUSER ${A", "line 2: bad substitution");
        refused("FROM base\nUSER ${A:-x", "line 2: missing }");
        refused("FROM base\nUSER ${}", "line 2: bad substitution");
        refused("FROM base\nWORKDIR " + "${A:-".repeat(10_000) + "x" + "}".repeat(10_000), "line 2: variables nested more than");
    }

    // WORKDIR and USER

    @Test
    void workdirIsAbsoluteOrRelativeToTheLastOne() {
        assertThat(after("WORKDIR app", "WORKDIR src//./lib/", "WORKDIR ../../tmp", "WORKDIR /a/../../b", "WORKDIR .."))
                .containsExactly(new BuildStep.Workdir("/app"), new BuildStep.Workdir("/app/src/lib"), new BuildStep.Workdir("/app/tmp"),
                        new BuildStep.Workdir("/b"), new BuildStep.Workdir("/"));
        assertThat(only("WORKDIR \"/my dir\"")).isEqualTo(new BuildStep.Workdir("/my dir"));
        refused("FROM base\nENV E=\nWORKDIR $E", "line 3: WORKDIR is empty");
    }

    @Test
    void userIsTakenAsWritten() {
        assertThat(only("USER 1000:1000")).isEqualTo(new BuildStep.User("1000:1000"));
        refused("FROM base\nUSER two words", "line 2:", "must be a user name or uid");
    }

    // COPY

    @Test
    void copySourcesAreContextPathsAndDestinationsAbsolute() {
        assertThat(after("COPY ./app.py /srv/", "WORKDIR /work", "COPY ./ .", "COPY a/./b//c rel/dir/", "COPY f rel/file",
                "COPY [\"with space.txt\", \"it's/\"]", "COPY g ../up", "COPY h /"))
                .containsExactly(new BuildStep.Copy("app.py", "/srv/"), new BuildStep.Workdir("/work"),
                        new BuildStep.Copy(".", "/work/"), new BuildStep.Copy("a/b/c", "/work/rel/dir/"),
                        new BuildStep.Copy("f", "/work/rel/file"), new BuildStep.Copy("with space.txt", "/work/it's/"),
                        new BuildStep.Copy("g", "/up"), new BuildStep.Copy("h", "/"));
    }

    @Test
    void severalSourcesMakeOneStepEachIntoADirectory() {
        assertThat(after("COPY a b \"c d\" /dest/"))
                .containsExactly(new BuildStep.Copy("a", "/dest/"), new BuildStep.Copy("b", "/dest/"), new BuildStep.Copy("c d", "/dest/"));
        assertThat(after("WORKDIR /w", "COPY a b .")).contains(new BuildStep.Copy("a", "/w/"), new BuildStep.Copy("b", "/w/"));
        refused("FROM base\nCOPY a b /dest", "line 2: COPY with several sources needs a destination directory ending in /");
    }

    @Test
    void copyFlagsAreRefusedByName() {
        refused("FROM base\nCOPY --from=build /out /out", "line 2: COPY --from is not supported: multi-stage builds are not");
        refused("FROM base\nCOPY --chown=app:app a /a", "line 2: COPY --chown is not supported");
        refused("FROM base\nCOPY --chmod=755 a /a", "line 2: COPY --chmod is not supported");
        refused("FROM base\nCOPY --link a /a", "line 2: COPY --link is not supported");
        refused("FROM base\nCOPY --chown=1 [\"a\", \"/a\"]", "line 2: COPY --chown is not supported");
    }

    @Test
    void copySourcesOutsideTheContextOrWithWildcardsAreRefused() {
        refused("FROM base\nCOPY ../secret /s", "line 2: COPY source '../secret' must stay inside the build context");
        refused("FROM base\nCOPY a/../../b /s", "line 2:", "inside the build context");
        refused("FROM base\nCOPY /etc/passwd /p", "line 2: COPY source '/etc/passwd' must be relative to the build context");
        refused("FROM base\nCOPY *.py /app/", "line 2: COPY source '*.py': wildcards (*, ? and [) are not supported yet");
        refused("FROM base\nCOPY file?.txt /app/", "line 2:", "wildcards");
        refused("FROM base\nCOPY [abc] /app/", "line 2:", "wildcards");
        refused("FROM base\nCOPY onlyone", "line 2: COPY needs a source and a destination");
        refused("FROM base\nCOPY [\"onlyone\"]", "line 2: COPY needs a source and a destination");
        refused("FROM base\nCOPY $UNSET /x", "line 2: a COPY source is empty");
    }

    // CMD

    @Test
    void cmdExecOrShellFormAndTheLastWins() {
        var parsed = Dockerfile.parse("FROM base\nCMD [\"sleep\", \"1\"]\nRUN true\nCMD  python -m http.server  ");
        assertThat(parsed.cmd()).contains(List.of("/bin/sh", "-c", "python -m http.server"));
        assertThat(parsed.steps()).containsExactly(new BuildStep.Run("true"));
        assertThat(Dockerfile.parse("FROM base\nCMD [\"sleep\",\"infinity\"]").cmd()).contains(List.of("sleep", "infinity"));
        refused("FROM base\nCMD []", "line 2: CMD [] has no command");
    }

    // Properties

    @Property
    void anyTextIsParsedOrRefusedAsInvalid(@ForAll String text) {
        parsesOrIsRefused(text);
        parsesOrIsRefused("FROM base\n" + text);
    }

    @Property(tries = 2000)
    void anyInstructionLikeLinesAreParsedOrRefusedAsInvalid(@ForAll("dockerfiles") String text) {
        parsesOrIsRefused(text);
    }

    private static void parsesOrIsRefused(String text) {
        try {
            var parsed = Dockerfile.parse(text);
            assertThat(parsed.from()).matches(TemplateBuildRequest.NAME.pattern());
        } catch (StasisException e) {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
            assertThat(e.details()).containsEntry("field", "dockerfile");
        }
    }

    /** Lines that look like instructions, made of the fragments the parser treats specially. */
    @Provide
    Arbitrary<String> dockerfiles() {
        var keyword = Arbitraries.of("FROM", "RUN", "run", "COPY", "ENV", "WORKDIR", "USER", "CMD", "LABEL", "EXPOSE", "ADD",
                "ARG", "#", "# escape=`", "");
        var fragment = Arbitraries.of("base", "a", "A=1", "=", "$", "$A", "${", "${A", "${A:-", "${A:+", "}", "\"", "'", "\\",
                "[", "]", "[\"", "\",", "\"]", "\\u00", "\\u0041", "\\n", ",", "--mount=x", "--from=a", "--chown", "..", "./", ".",
                "/", "/abs/", "*", "?", " ", "  ", "\t", "#", "AS", "ubuntu:24.04", "é", "\u0000", "\r");
        var line = Combinators.combine(keyword, fragment.list().ofMaxSize(8))
                .as((word, fragments) -> word + " " + String.join("", fragments));
        var end = Arbitraries.of("\n", "\r\n", " \\\n", "\\\n");
        var lineWithEnd = Combinators.combine(line, end).as(String::concat);
        return Combinators.combine(Arbitraries.of("FROM base\n", ""), lineWithEnd.list().ofMaxSize(12))
                .as((first, lines) -> first + String.join("", lines));
    }

    @Property
    void execFormRunPassesEachArgumentThroughTheShellAsItIs(@ForAll("argumentLists") List<String> argv) {
        var run = (BuildStep.Run) only("RUN " + json(argv));
        assertThat(singleQuotedWords(run.command())).isEqualTo(argv);
    }

    @Provide
    Arbitrary<List<String>> argumentLists() {
        var arg = Arbitraries.strings().withChars("ab '\"\\$`*;&|\n\t{}[],").withCharRange('\u0001', '\u024f').ofMaxLength(12);
        return arg.list().ofMinSize(1).ofMaxSize(6);
    }

    /** The list as a JSON array, its characters escaped as JSON requires (and some as JSON allows). */
    private static String json(List<String> strings) {
        var out = new StringBuilder("[");
        for (var s : strings) {
            if (out.length() > 1) out.append(", ");
            out.append('"');
            for (char c : s.toCharArray()) {
                if (c == '"' || c == '\\') out.append('\\').append(c);
                else if (c < 0x20 || c > 0x7e) out.append(String.format("\\u%04x", (int) c));
                else out.append(c);
            }
            out.append('"');
        }
        return out.append(']').toString();
    }

    /** Splits words made of '...' runs and \-escaped characters, as /bin/sh would: the inverse of the exec-form quoting. */
    private static List<String> singleQuotedWords(String command) {
        var words = new ArrayList<String>();
        var word = new StringBuilder();
        boolean inWord = false;
        for (int i = 0; i < command.length(); i++) {
            char c = command.charAt(i);
            if (c == ' ') {
                if (inWord) words.add(word.toString());
                word.setLength(0);
                inWord = false;
            } else if (c == '\'') {
                int end = command.indexOf('\'', i + 1);
                assertThat(end).as("closing quote in %s", command).isPositive();
                word.append(command, i + 1, end);
                inWord = true;
                i = end;
            } else if (c == '\\') {
                word.append(command.charAt(++i));
                inWord = true;
            } else {
                throw new AssertionError("unquoted '" + c + "' in " + command);
            }
        }
        if (inWord) words.add(word.toString());
        return words;
    }

    @Test
    void parsedCopiesItsLists() {
        var steps = new ArrayList<BuildStep>(List.of(new BuildStep.Run("true")));
        var parsed = new Dockerfile.Parsed("base", steps, Optional.of(new ArrayList<>(List.of("sh"))));
        steps.clear();
        assertThat(parsed.steps()).hasSize(1);
        assertThatThrownBy(() -> parsed.cmd().orElseThrow().add("x")).isInstanceOf(UnsupportedOperationException.class);
    }
}
