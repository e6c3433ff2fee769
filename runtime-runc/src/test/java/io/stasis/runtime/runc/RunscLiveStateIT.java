package io.stasis.runtime.runc;

import java.io.IOException;
import org.junit.jupiter.api.BeforeAll;

/** Freeze, checkpoint and restore against gVisor's runsc (as `./stasis setup` installs it): the live state suite runc passes. */
class RunscLiveStateIT extends LiveStateOnHost {
    @BeforeAll
    static void setUp() throws IOException {
        host = RuncTestHost.gvisor();
    }

    @Override
    protected boolean limitsShowInside() {
        return false;
    }
}
