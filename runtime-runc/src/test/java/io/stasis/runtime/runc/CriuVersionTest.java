package io.stasis.runtime.runc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/** What CRIU's {@code --version} says, read for stasis-criu's answer to runc. */
class CriuVersionTest {
    @Test
    void aReleaseIsReadAndAGitBuildIsNot() {
        assertThat(CriuVersion.parse("Version: 4.2.1\n")).contains(new CriuVersion(4, 2, 1));
        assertThat(CriuVersion.parse("Version: 3.17\n")).contains(new CriuVersion(3, 17, 0));
        assertThat(CriuVersion.parse("Version: 4.2.1\nGitID: v4.2.1-12-gabcdef\n")).isEmpty();
        assertThat(CriuVersion.parse("criu: unknown option\n")).isEmpty();
        assertThat(CriuVersion.parse("Version: 4.2.1-rc1\n")).isEmpty();
        assertThat(CriuVersion.parse("Version: 12345.1.1\n")).as("more than stasis-criu reads").isEmpty();
    }

    @Property
    void whatItPrintsIsWhatTheHelperIsGiven(@ForAll @IntRange(max = 9999) int major, @ForAll @IntRange(max = 9999) int minor,
                                            @ForAll @IntRange(max = 9999) int sublevel) {
        var version = new CriuVersion(major, minor, sublevel);
        assertThat(CriuVersion.parse("Version: " + version.wire() + "\n")).isEqualTo(Optional.of(version));
    }
}
