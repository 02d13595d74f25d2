"""The build's stages, in order: load (sources, config) → parse → link → render → write."""
