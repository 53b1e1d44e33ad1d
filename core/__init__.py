"""Pieces every app stands on, below the services: the one domain error and how pages and the
API show it, the background-job lifecycle. Nothing here imports an app."""
