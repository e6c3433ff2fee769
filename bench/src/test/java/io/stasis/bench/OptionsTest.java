package io.stasis.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class OptionsTest {
    @Test
    void defaults() {
        var options = Options.parse();
        assertThat(options.scale()).isEqualTo(1);
        assertThat(options.json()).isEqualTo(Options.DEFAULT_JSON);
        assertThat(options.effective()).isEqualTo(Options.Counts.defaults());
        assertThat(Options.SCENARIOS).allMatch(options::runs);
        assertThat(options.help()).isFalse();
    }

    @Test
    void scaleMultipliesEveryCountButNeverBelowOne() {
        var counts = Options.parse("--iterations-scale", "0.2").effective();
        assertThat(counts).isEqualTo(new Options.Counts(6, 40, 6, 1, 10, 6, 10, 1, 2, 1, 20, 1, 40, 40, 200, 100, 2, 1, 4, 200, 40, 100, 2));
        var tiny = Options.parse("--iterations-scale=0.01").effective();
        assertThat(tiny).isEqualTo(new Options.Counts(1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 10, 5, 1, 1, 1, 10, 2, 5, 1));
        assertThat(Options.parse("--warmup", "0", "--iterations-scale", "0.01").effective().warmup()).isZero();
    }

    @Test
    void onlyJsonAndCounts() {
        var options = Options.parse("--only", "exec,floors", "--json", "/tmp/x.json", "--exec-n", "7", "--idle-sandboxes=3");
        assertThat(options.runs("exec")).isTrue();
        assertThat(options.runs("floors")).isTrue();
        assertThat(options.runs("create")).isFalse();
        assertThat(options.json()).isEqualTo(Path.of("/tmp/x.json"));
        assertThat(options.effective().exec()).isEqualTo(7);
        assertThat(options.effective().idleSandboxes()).isEqualTo(3);
        var live = Options.parse("--only", "pause,standby,seed,hibernate,fork10,checkpoint", "--pause-n", "4", "--hibernate-n=2", "--checkpoint-n", "3",
                "--fork10-n", "1");
        assertThat(live.runs("checkpoint")).isTrue();
        assertThat(live.runs("exec")).isFalse();
        assertThat(live.effective()).extracting(Options.Counts::pause, Options.Counts::hibernate, Options.Counts::checkpoint,
                Options.Counts::fork10).containsExactly(4, 2, 3, 1);
    }

    @Test
    void theLiveVisibilityScenariosHaveTheirCounts() {
        var options = Options.parse("--only", "output,output-latency,file-watch,followers", "--output-n", "2", "--latency-n=300",
                "--file-event-n", "50", "--followers", "20", "--output-size", "10M");
        assertThat(options.runs("followers")).isTrue();
        assertThat(options.runs("exec")).isFalse();
        assertThat(options.effective()).extracting(Options.Counts::output, Options.Counts::outputLatency, Options.Counts::fileEvents,
                Options.Counts::followers).containsExactly(2, 300, 50, 20);
        assertThat(options.outputSize()).isEqualTo(10L << 20);
        assertThat(Options.parse().outputSize()).isEqualTo(200L << 20);
        assertThatThrownBy(() -> Options.parse("--output-size", "0")).hasMessageContaining("--output-size");
        assertThat(Options.parse().followersInFlight()).isEqualTo(32);
        assertThat(Options.parse("--followers-in-flight", "1000").followersInFlight()).isEqualTo(1000);
    }

    @Test
    void theBlobScenariosHaveTheirCountAndSizes() {
        var defaults = Options.parse();
        assertThat(defaults.blobRootSize()).isEqualTo(1L << 30);
        assertThat(defaults.blobDataSize()).isEqualTo(256L << 20);
        assertThat(defaults.effective().blob()).isEqualTo(3);
        var options = Options.parse("--only", "blob-dedup,blob-throughput", "--blob-n", "2", "--blob-root-size", "32M",
                "--blob-data-size=16M");
        assertThat(options.runs("blob-dedup")).isTrue();
        assertThat(options.runs("blob-throughput")).isTrue();
        assertThat(options.runs("exec")).isFalse();
        assertThat(options.effective().blob()).isEqualTo(2);
        assertThat(options.blobRootSize()).isEqualTo(32L << 20);
        assertThat(options.blobDataSize()).isEqualTo(16L << 20);
        assertThatThrownBy(() -> Options.parse("--blob-data-size", "0")).hasMessageContaining("--blob-data-size");
    }

    @Test
    void maxSizeTakesSuffixes() {
        assertThat(Options.parse().maxSize()).isEqualTo(5L << 30);
        assertThat(Options.parse("--max-size", "100M").maxSize()).isEqualTo(100L << 20);
        assertThat(Options.parse("--max-size=2g").maxSize()).isEqualTo(2L << 30);
        assertThat(Options.parse("--max-size", "4096").maxSize()).isEqualTo(4096);
        assertThatThrownBy(() -> Options.parse("--max-size", "0")).hasMessageContaining("--max-size");
        assertThatThrownBy(() -> Options.parse("--max-size", "lots")).hasMessageContaining("--max-size");
    }

    @Test
    void underGvisorTheLifecycleScenariosRun() {
        assertThat(Options.parse().runtimes()).containsExactly("runc");
        var gvisor = Options.parse("--runtime", "gvisor");
        assertThat(gvisor.runtimes()).containsExactly("gvisor");
        for (String lifecycle : List.of("create", "exec", "memory", "pause", "standby", "hibernate", "fork10", "checkpoint"))
            assertThat(gvisor.runs(lifecycle)).as(lifecycle).isTrue();
        assertThat(gvisor.runs("floors")).isFalse();
        assertThat(Options.parse("--runtime", "gvisor", "--only", "exec,checkpoint").runs("checkpoint")).isTrue();
        assertThatThrownBy(() -> Options.parse("--runtime", "gvisor", "--only", "exec,floors"))
                .hasMessageContaining("--runtime gvisor runs only create,exec,memory,pause,standby,hibernate,fork10,checkpoint, not floors");
        assertThatThrownBy(() -> Options.parse("--runtime", "kata")).hasMessageContaining("--runtime must be runc, gvisor or both");
    }

    @Test
    void bothRuntimesRunRuncsPassThenGvisorsWithItsOwnScenarios() {
        var both = Options.parse("--runtime", "both", "--only", "exec,floors");
        assertThat(both.runtimes()).containsExactly("runc", "gvisor");
        assertThat(both.runs("floors", "runc")).isTrue();
        assertThat(both.runs("floors", "gvisor")).as("runc's own floors").isFalse();
        assertThat(both.runs("exec", "gvisor")).isTrue();
        assertThat(both.runs("floors")).isTrue();
    }

    @Test
    void badCommandLinesSayWhatIsWrong() {
        assertThatThrownBy(() -> Options.parse("--only", "nope")).hasMessageContaining("unknown scenario 'nope'");
        assertThatThrownBy(() -> Options.parse("--iterations-scale", "0")).hasMessageContaining("positive");
        assertThatThrownBy(() -> Options.parse("--exec-n", "x")).hasMessageContaining("--exec-n");
        assertThatThrownBy(() -> Options.parse("--json")).hasMessageContaining("needs a value");
        assertThatThrownBy(() -> Options.parse("--frobnicate", "1")).hasMessageContaining("unknown flag");
        assertThatThrownBy(() -> Options.parse("stray")).hasMessageContaining("unexpected argument");
    }

    @Test
    void helpIsRecognisedAndUsageNamesEveryFlag() {
        assertThat(Options.parse("--help").help()).isTrue();
        assertThat(Options.usage()).contains("--iterations-scale", "--only", "--json", "--create-n", "--exec-n",
                "--file-1mb-n", "--file-100mb-n", "--idle-sandboxes", "--floor-n", "--warmup", "nearest-rank", "--max-size",
                "--pause-n", "--hibernate-n", "--checkpoint-n", "--fork10-n", "pause,standby,seed,hibernate,fork10,checkpoint", "--output-n",
                "--output-size", "--latency-n", "--file-event-n", "--followers", "--followers-in-flight",
                "output,output-latency,file-watch,followers");
    }
}
