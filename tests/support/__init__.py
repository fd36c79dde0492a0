"""Helpers the tests share, imported as ``support.<module>`` (``tests`` is on pytest's path):

- ``example_plugin``: the example third-party plugin's sampler, imported without installing it;
- ``zoo``, ``query_zoo``, ``anonymized_zoo``: known-broken mechanisms, each with the conformance
  contract that must catch it;
- ``overspending``: plugins that spend more than they are granted, for the adapters' budgets;
- ``fresh_interpreter``: running test code in a new interpreter;
- ``geometric``, ``histograms``, ``selectors``: exact checks and constructions shared by the
  samplers', histogram releasers' and partition selectors' tests.
"""
