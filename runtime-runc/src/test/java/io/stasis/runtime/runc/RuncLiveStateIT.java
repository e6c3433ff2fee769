package io.stasis.runtime.runc;

import java.io.IOException;
import org.junit.jupiter.api.BeforeAll;

/** Freeze, checkpoint and restore against runc and a real CRIU (>= 4.2, as `./stasis setup` installs). */
class RuncLiveStateIT extends LiveStateOnHost {
    @BeforeAll
    static void setUp() throws IOException {
        RuncTestHost.criuOrSkip();
        host = new RuncTestHost();
    }
}
