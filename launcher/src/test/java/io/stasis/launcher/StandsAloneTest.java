package io.stasis.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import org.junit.jupiter.api.Test;

/** The repository stands alone: nothing in it points at files a clone does not have. */
class StandsAloneTest {
    /** The team's shared folder beside the checkout, which a user who clones the repository does not have. */
    private static final String OUTSIDE = ".." + "/shared";

    @Test
    void noTrackedFileReferencesTheSharedFolderBesideTheCheckout() throws Exception {
        var git = new ProcessBuilder("git", "ls-files", "-z").directory(Bash.ROOT.toFile()).start();
        String listing = new String(git.getInputStream().readAllBytes());
        git.waitFor();
        var offending = new ArrayList<String>();
        for (String name : listing.split("\0")) {
            if (name.isEmpty()) continue;
            Path file = Bash.ROOT.resolve(name);
            if (!Files.isRegularFile(file) || Files.size(file) > 4 << 20) continue;
            String text = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
            if (text.contains(OUTSIDE)) offending.add(name);
        }
        assertThat(offending).isEmpty();
    }
}
