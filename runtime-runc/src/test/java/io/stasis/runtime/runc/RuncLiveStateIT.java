package io.stasis.runtime.runc;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import org.junit.jupiter.api.BeforeAll;

/** Freeze, checkpoint and restore against runc and a real CRIU (>= 4.2, as `./stasis setup` installs). */
class RuncLiveStateIT extends LiveStateOnHost {
    @BeforeAll
    static void setUp() throws IOException {
        assumeTrue(RuncTestHost.criu().isPresent(), "no CRIU at /opt/stasis/criu/criu or $STASIS_CRIU: run ./stasis setup");
        host = new RuncTestHost();
    }
}
