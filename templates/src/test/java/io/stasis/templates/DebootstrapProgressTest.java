package io.stasis.templates;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class DebootstrapProgressTest {
    @Test
    void fractionsRiseThroughThePhasesAndNeverGoBack() {
        var lines = new ArrayList<String>(List.of("I: Retrieving InRelease ", "I: Checking Release signature",
                "I: Valid Release signature (key id 4D64FEC119C2029067D6E791F8D2585B8783D481)",
                "I: Retrieving Packages ", "I: Validating Packages ", "I: Resolving dependencies of required packages..."));
        int packages = 100;
        for (int i = 0; i < packages; i++) {
            lines.add("I: Retrieving pkg" + i + " 1.0-" + i);
            lines.add("I: Validating pkg" + i + " 1.0-" + i);
        }
        lines.add("I: Chosen extractor for .deb packages: dpkg-deb");
        for (int i = 0; i < packages; i++) lines.add("I: Extracting pkg" + i + "...");
        lines.add("I: Installing core packages...");
        lines.add("I: Unpacking required packages...");
        for (int i = 0; i < packages; i++) lines.add("I: Unpacking pkg" + i + ":amd64...");
        lines.add("I: Configuring required packages...");
        for (int i = 0; i < packages; i++) lines.add("I: Configuring pkg" + i + ":amd64...");
        lines.add("I: Base system installed successfully.");
        lines.add("W: something odd");

        var parser = new DebootstrapProgress();
        var fractions = new ArrayList<Double>();
        var messages = new ArrayList<String>();
        for (String line : lines) parser.accept(line).ifPresent(s -> {
            fractions.add(s.fraction());
            messages.add(s.message());
        });
        assertThat(fractions).isSorted();
        assertThat(fractions.getFirst()).isBetween(0.0, 0.05);
        assertThat(fractions.getLast()).isEqualTo(0.97);
        assertThat(messages).contains("Retrieving pkg5 1.0-5", "Configuring pkg99:amd64...").doesNotContain("something odd");
        // halfway through configuring is well past halfway overall
        int midConfigure = messages.indexOf("Configuring pkg50:amd64...");
        assertThat(fractions.get(midConfigure)).isBetween(0.8, 0.9);
        int midDownload = messages.indexOf("Retrieving pkg50 1.0-50");
        assertThat(fractions.get(midDownload)).isBetween(0.15, 0.3);
    }

    @Test
    void ignoresOtherLines() {
        var parser = new DebootstrapProgress();
        assertThat(parser.accept("W: Cannot check Release signature")).isEmpty();
        assertThat(parser.accept("")).isEmpty();
        assertThat(parser.accept("dpkg: warning")).isEmpty();
    }
}
