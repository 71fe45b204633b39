"""Consumer groups that follow the mirror: the sink's offset map, exact translation, group sync and failover."""
