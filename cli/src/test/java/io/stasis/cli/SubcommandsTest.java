package io.stasis.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.io.PrintStream;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Only the verb a command line names is registered; anything else gets all of them. */
class SubcommandsTest {
    private static CommandLine registered(String... args) {
        var io = new CliIo(new PrintStream(PrintStream.nullOutputStream()), new PrintStream(PrintStream.nullOutputStream()),
                InputStream.nullInputStream(), Map.of(), false);
        var commandLine = new CommandLine(new StasisCommand(io));
        Subcommands.register(commandLine, args);
        return commandLine;
    }

    @Test
    void theVerbIsTheFirstWordThatIsNeitherARootOptionNorItsValue() {
        assertThat(registered("list").getSubcommands()).containsOnlyKeys("list", "ls");
        assertThat(registered("--url", "http://h:1", "--json", "exec", "demo", "--", "true").getSubcommands()).containsOnlyKeys("exec");
        assertThat(registered("--api-key=sk_x", "--data-dir", "/d", "pause", "demo").getSubcommands()).containsOnlyKeys("pause");
        assertThat(registered("exec", "demo", "--", "ls").getSubcommands().get("exec").isStopAtPositional()).isTrue();
    }

    @Test
    void helpATypoNothingOrCompletionRegisterEveryVerb() {
        int all = registered("--help").getSubcommands().size();
        assertThat(all).isGreaterThan(40);
        assertThat(registered().getSubcommands()).hasSize(all);
        assertThat(registered("lst").getSubcommands()).hasSize(all);
        assertThat(registered("--", "list").getSubcommands()).hasSize(all);
        assertThat(registered("completion", "bash").getSubcommands()).hasSize(all);
    }
}
