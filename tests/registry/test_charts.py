"""The bar chart component: figures and counts as text, reliability, a second series."""

from __future__ import annotations

from django.template.loader import render_to_string

from registry.statistics.charts import BarChart, BarRow, count_bar, is_unreliable, rate_bar


def test_a_rate_prints_its_figure_and_counts_and_is_unreliable_under_20():
    assert rate_bar(3, 16).text == "18.8% (3 of 16)"
    assert rate_bar(3, 16).unreliable
    assert not rate_bar(3, 20).unreliable
    assert [is_unreliable(n) for n in (0, 1, 19, 20)] == [False, True, True, False]


def test_nothing_to_divide_is_no_bar_and_no_number():
    empty = rate_bar(0, 0)
    assert (empty.fraction, empty.percent, empty.unreliable) == (None, 0.0, False)
    assert empty.text == "no data (none to count)"


def test_a_count_is_measured_against_the_largest():
    assert count_bar(25, 100).percent == 25.0
    assert count_bar(0, 0).percent == 0.0


def test_the_template_draws_both_series_with_their_names_and_the_caution():
    chart = BarChart(
        "Preterm",
        "Born before 37 weeks.",
        [
            BarRow("Midwife", rate_bar(2, 16), second=rate_bar(900, 10_000), emphasis=True),
            BarRow("Nurse", rate_bar(0, 0)),
        ],
        series=("St Mary's", "Registry"),
    )
    html = render_to_string("components/bar_chart.html", {"chart": chart, "chart_id": "p"})
    assert 'id="chart-p-title">Preterm</strong>' in html
    assert '12.5% (2 of 16) <span class="unreliable">unreliable</span>' in html
    assert '<span class="visually-hidden">Registry: </span>9.0% (900 of 10,000)' in html
    assert "width: 12.5%" in html and "width: 9.0%" in html
    assert html.count("bar-chart__bar--second") == 1
    assert "fewer than 20 in the denominator" in html
    assert chart.has_unreliable and not chart.is_empty
