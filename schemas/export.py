"""JSON Schema files exported from the event models (`python -m engram.schemas.export`).

The files under schemas/json/ are committed; a test fails when they drift
from the models, so a schema change is always a visible, reviewed diff.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .codec import current_version
from .events import EVENT_TYPES
from .topics import CATALOGUE

JSON_DIR = Path(__file__).parent / "json"


def rendered_schemas() -> dict[str, str]:
    """File name -> JSON text for every event type, plus the topic catalogue."""
    files = {}
    for name, model in sorted(EVENT_TYPES.items()):
        schema = model.model_json_schema(mode="serialization")
        files[f"{name}.v{current_version(name)}.json"] = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
    catalogue = [
        {"name": t.name, "event_types": list(t.event_types), "partitions": t.partitions,
         "key": "tenant_id/user_id", "configs": t.kafka_configs(), "description": t.description}
        for t in CATALOGUE
    ]
    files["topics.json"] = json.dumps(catalogue, indent=2, ensure_ascii=False) + "\n"
    return files


def export(target: Path = JSON_DIR) -> list[Path]:
    target.mkdir(parents=True, exist_ok=True)
    for stale in target.glob("*.json"):
        stale.unlink()
    written = []
    for name, text in rendered_schemas().items():
        path = target / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    paths = export(Path(sys.argv[1]) if len(sys.argv) > 1 else JSON_DIR)
    print(f"wrote {len(paths)} schema files to {paths[0].parent}")
