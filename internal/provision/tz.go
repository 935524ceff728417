package provision

// The schedule's time zone is validated with the zone database, which the
// provider's binary embeds so that it does not depend on the host's.
import _ "time/tzdata"
