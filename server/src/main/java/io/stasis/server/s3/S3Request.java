package io.stasis.server.s3;

import io.stasis.core.auth.Caller;
import io.stasis.core.volume.Volume;
import java.nio.file.Path;

/** A request after authentication: its volume, key (empty for the bucket), caller and how its body is to be read. */
record S3Request(Volume volume, Path root, String key, Caller caller, SigV4.Verified signed) {
}
