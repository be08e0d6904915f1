"""A Django form for a job kind, built from its pydantic parameter schema (labels, defaults, help
text and bounds come from the schema; the schema validates again on submit and is the authority)."""

from typing import Any

from django import forms

from jobs.registry import InvalidParameters, JobSpec


def _plain(prop: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The non-null alternative of an optional property, and whether null is allowed."""
    options = prop.get("anyOf")
    if not options:
        return prop, False
    plain = next((o for o in options if o.get("type") != "null"), {})
    return {**plain, **{k: v for k, v in prop.items() if k != "anyOf"}}, True


def _bounds(prop: dict[str, Any]) -> dict[str, Any]:
    # Inclusive bounds only: the schema itself checks the exclusive ones, with its own message.
    return {"min_value": prop.get("minimum"), "max_value": prop.get("maximum")}


class IdListField(forms.CharField):
    def to_python(self, value):
        text = super().to_python(value)
        if not text:
            return None
        try:
            return [int(part) for part in text.replace(",", " ").split()]
        except ValueError:
            raise forms.ValidationError("give whole numbers separated by commas") from None


def form_field(prop: dict[str, Any], required: bool) -> forms.Field:
    prop, nullable = _plain(prop)
    common = {
        "label": prop.get("title"),
        "help_text": prop.get("description", ""),
        "required": required and not nullable,
        "initial": prop.get("default"),
    }
    kind = prop.get("type")
    if kind == "boolean":
        return forms.BooleanField(**{**common, "required": False})
    if kind == "integer":
        return forms.IntegerField(**common, **_bounds(prop))
    if kind == "number":
        return forms.FloatField(**common, **_bounds(prop), widget=forms.NumberInput(attrs={"step": "any"}))
    if kind == "string" and "enum" in prop:
        return forms.ChoiceField(**common, choices=[(v, v) for v in prop["enum"]])
    if kind == "array" and "enum" in prop.get("items", {}):
        choices = [(v, v) for v in prop["items"]["enum"]]
        return forms.MultipleChoiceField(**common, choices=choices, widget=forms.CheckboxSelectMultiple)
    if kind == "array":
        return IdListField(**common)
    return forms.CharField(**common, max_length=prop.get("maxLength"))


class JobForm(forms.Form):
    def __init__(self, spec: JobSpec, *args, **kwargs):
        super().__init__(*args, prefix=spec.kind, **kwargs)
        self.spec = spec
        schema = spec.parameters.model_json_schema()
        notes = spec.field_notes() if spec.field_notes else {}
        for name, prop in schema.get("properties", {}).items():
            self.fields[name] = form_field(prop, name in schema.get("required", []))
            if notes.get(name):
                self.fields[name].help_text = " ".join(filter(None, [self.fields[name].help_text, notes[name]]))

    def parameters(self) -> dict[str, Any] | None:
        """The validated parameters (defaults filled in), or None with the errors on the form."""
        if not self.is_valid():
            return None
        raw = {name: value for name, value in self.cleaned_data.items() if value not in (None, "")}
        try:
            return self.spec.validate(raw)
        except InvalidParameters as error:
            for field, messages in error.errors.items():
                self.add_error(field.split(".")[0] if field.split(".")[0] in self.fields else None, " ".join(messages))
            return None
