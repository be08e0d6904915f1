"""The model-in-the-loop chain above the capabilities: ranking candidates into a campaign's HITs
(`candidates`), the steps in order as one job (`pipeline`: `run_pipeline`) and the whole demo
built as one job (`demo`: `demo_build`)."""
