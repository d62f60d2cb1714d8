"""The only layer that talks to Kubernetes: kopf handlers, the API session, binder, reporter,
metrics and health endpoints. Nothing below it (scheduling, profiles, engine) does I/O."""
